/** The diffusers `scheduler_config.json` fields the samplers use, with diffusers' defaults applied. */
export type SchedulerConfig = {
    numTrainTimesteps: number;
    betaStart: number;
    betaEnd: number;
    betaSchedule: "linear" | "scaled_linear" | "squaredcos_cap_v2";
    /** Explicit betas (diffusers `trained_betas`); they replace beta_start/beta_end/beta_schedule. */
    trainedBetas: number[] | null;
    predictionType: "epsilon" | "v_prediction";
    /** Only used when a plan asks for diffusers-style spacing (`spacing: "config"`); A1111 names ignore it. */
    timestepSpacing: "leading" | "linspace" | "trailing";
    stepsOffset: number;
};

const betaSchedules = ["linear", "scaled_linear", "squaredcos_cap_v2"] as const;
const predictionTypes = ["epsilon", "v_prediction"] as const;
const timestepSpacings = ["leading", "linspace", "trailing"] as const;
/** diffusers' schedulers whose `timestep_spacing` defaults to "linspace" (the others default to "leading"). */
const linspaceByDefault = new Set(["EulerDiscreteScheduler", "EulerAncestralDiscreteScheduler", "HeunDiscreteScheduler",
    "LMSDiscreteScheduler", "KDPM2DiscreteScheduler", "KDPM2AncestralDiscreteScheduler"]);

/**
 * Reads a diffusers `scheduler/scheduler_config.json` (the parsed JSON or its text). Missing fields take the defaults of
 * diffusers' schedulers (num_train_timesteps 1000, beta_start 0.0001, beta_end 0.02, beta_schedule "linear",
 * prediction_type "epsilon", steps_offset 0, timestep_spacing by `_class_name`). Unknown fields are ignored
 * (set_alpha_to_one, skip_prk_steps, clip_sample, ...). A bad field throws an Error naming it.
 */
export function parseSchedulerConfig(json: unknown): SchedulerConfig {
    const config = typeof json === "string" ? parseText(json) : json;
    if (config == null || typeof config !== "object" || Array.isArray(config))
        throw new Error("scheduler_config.json: expected a JSON object.");
    const fields = config as Record<string, unknown>;

    const numTrainTimesteps = field(fields, "num_train_timesteps", 1000, (value) => Number.isInteger(value) && (value as number) >= 2 && (value as number) <= 100_000, "an integer from 2 to 100000");
    const betaStart = field(fields, "beta_start", 0.0001, isPositiveBelowOne, "a number in (0, 1)");
    const betaEnd = field(fields, "beta_end", 0.02, isPositiveBelowOne, "a number in (0, 1)");
    const betaSchedule = field(fields, "beta_schedule", "linear", oneOf(betaSchedules), `one of ${betaSchedules.join(", ")}`);
    const predictionType = field(fields, "prediction_type", "epsilon", oneOf(predictionTypes), `one of ${predictionTypes.join(", ")} (sample prediction is not supported)`);
    const className = typeof fields._class_name === "string" ? fields._class_name : "";
    const timestepSpacing = field(fields, "timestep_spacing", linspaceByDefault.has(className) ? "linspace" : "leading", oneOf(timestepSpacings), `one of ${timestepSpacings.join(", ")}`);
    const stepsOffset = field(fields, "steps_offset", 0, (value) => Number.isInteger(value) && (value as number) >= 0 && (value as number) < numTrainTimesteps, "a non-negative integer below num_train_timesteps");
    const trainedBetas = fields.trained_betas == null ? null : fields.trained_betas;
    if (trainedBetas != null && !(Array.isArray(trainedBetas) && trainedBetas.length === numTrainTimesteps && trainedBetas.every(isPositiveBelowOne)))
        throw new Error(`scheduler_config.json: trained_betas must be an array of ${numTrainTimesteps} numbers in (0, 1).`);
    if (fields.rescale_betas_zero_snr === true)
        throw new Error("scheduler_config.json: rescale_betas_zero_snr is not supported (sigma_max would be infinite).");
    return {
        numTrainTimesteps, betaStart, betaEnd, betaSchedule, predictionType, timestepSpacing, stepsOffset,
        trainedBetas: trainedBetas as number[] | null
    };
}

function parseText(text: string): unknown {
    try {
        return JSON.parse(text);
    } catch (error) {
        throw new Error(`scheduler_config.json is not valid JSON: ${(error as Error).message}`);
    }
}

function field<T>(fields: Record<string, unknown>, name: string, fallback: T, valid: (value: unknown) => boolean, expected: string): T {
    const value = fields[name];
    if (value === undefined || value === null)
        return fallback;
    if (!valid(value))
        throw new Error(`scheduler_config.json: ${name} must be ${expected}, got ${JSON.stringify(value)}.`);
    return value as T;
}

function isPositiveBelowOne(value: unknown) {
    return typeof value === "number" && value > 0 && value < 1;
}

function oneOf(values: readonly string[]) {
    return (value: unknown) => typeof value === "string" && values.includes(value);
}
