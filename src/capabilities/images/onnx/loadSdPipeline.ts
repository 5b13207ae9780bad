import fs from "node:fs";
import path from "node:path";
import type { PreTrainedTokenizer } from "@huggingface/transformers";
import { OnnxSession, type OnnxValueInfo } from "../../../runtimes/onnx/OnnxSession.js";
import { parseSchedulerConfig, type SchedulerConfig } from "../samplers/parseSchedulerConfig.js";
import { trainingSchedule, type TrainingSchedule } from "../samplers/trainingSchedule.js";
import { loadClipTokenizer } from "./loadClipTokenizer.js";
import type { SdDescribeResult, SdModelSpec } from "./workerProtocol.js";

/** A loaded Stable Diffusion folder: the tokenizer, three sessions (plus an optional preview decoder) and what they declare. */
export type SdPipeline = {
    spec: SdModelSpec;
    tokenizer: PreTrainedTokenizer;
    textEncoder: OnnxSession;
    unet: OnnxSession;
    vaeDecoder: OnnxSession;
    previewDecoder: OnnxSession | null;
    /** The inputs the pipeline feeds, as the sessions declare them. */
    io: {
        inputIds: OnnxValueInfo;
        hiddenStates: string;
        sample: OnnxValueInfo;
        timestep: OnnxValueInfo;
        encoderHiddenStates: OnnxValueInfo;
        /** LCM-distilled UNets embed the guidance scale (w − 1) instead of running classifier-free guidance. */
        timestepCond: OnnxValueInfo | null;
        unetOutput: string;
        latentSample: OnnxValueInfo;
        vaeOutput: string;
    };
    /** Rows per UNet call when the export fixes the batch size, else null. */
    unetBatch: number | null;
    textBatch: number | null;
    padTokenId: number;
    eosTokenId: number;
    bosTokenId: number;
    scheduler: SchedulerConfig;
    schedule: TrainingSchedule;
    describe: SdDescribeResult;
};

const defaultScalingFactor = 0.18215;
const defaultTextWindow = 77;

export async function loadSdPipeline(spec: SdModelSpec): Promise<SdPipeline> {
    const {folder, threads} = spec;
    const file = (...parts: string[]) => path.join(folder, ...parts);
    const optionalJson = (...parts: string[]): Record<string, unknown> => {
        const location = file(...parts);
        return fs.existsSync(location) ? JSON.parse(fs.readFileSync(location, "utf8")) as Record<string, unknown> : {};
    };
    for (const required of ["text_encoder/model.onnx", "unet/model.onnx", "vae_decoder/model.onnx", "scheduler/scheduler_config.json"])
        if (!fs.existsSync(file(required)))
            throw new Error(`Stable Diffusion folder ${folder} has no ${required} (expected the diffusers/optimum ONNX layout).`);

    const scheduler = parseSchedulerConfig(fs.readFileSync(file("scheduler", "scheduler_config.json"), "utf8"));
    const tokenizer = await loadClipTokenizer(folder);
    // One at a time: loading is memory-bound, and a UNet can be gigabytes.
    const textEncoder = await OnnxSession.load(file("text_encoder", "model.onnx"), threads);
    const unet = await OnnxSession.load(file("unet", "model.onnx"), threads);
    const vaeDecoder = await OnnxSession.load(file("vae_decoder", "model.onnx"), threads);
    const previewDecoder = spec.previewDecoder != null ? await OnnxSession.load(spec.previewDecoder, threads) : null;

    const inputIds = textEncoder.input("input_ids");
    const hiddenStates = outputNamed(textEncoder, "last_hidden_state", 3);
    const sample = unet.input("sample");
    const timestep = unet.input("timestep");
    const encoderHiddenStates = unet.input("encoder_hidden_states");
    const timestepCond = unet.inputs.get("timestep_cond") ?? null;
    const known = new Set(["sample", "timestep", "encoder_hidden_states", "timestep_cond"]);
    const unknown = [...unet.inputs.keys()].filter((name) => !known.has(name));
    if (unknown.length > 0)
        throw new Error(`${unet.file}: unsupported UNet inputs ${unknown.join(", ")} (SDXL-style added conditioning is not supported).`);
    const latentSample = vaeDecoder.input("latent_sample");

    const unetConfig = optionalJson("unet", "config.json");
    const vaeConfig = optionalJson("vae_decoder", "config.json");
    const tokenizerConfig = optionalJson("tokenizer", "tokenizer_config.json");
    const blocks = Array.isArray(vaeConfig.block_out_channels) ? vaeConfig.block_out_channels.length : 4;
    const vaeScaleFactor = 2 ** (blocks - 1);
    const [, channels, sampleHeight, sampleWidth] = sample.shape;
    const fixedSize = typeof sampleHeight === "number" && typeof sampleWidth === "number";
    const configSize = sizeOf(unetConfig.sample_size);
    const latentSize = fixedSize ? {height: sampleHeight, width: sampleWidth} : configSize ?? {height: 64, width: 64};
    const latentChannels = typeof channels === "number" ? channels : typeof unetConfig.in_channels === "number" ? unetConfig.in_channels : 4;
    const scalingFactor = typeof vaeConfig.scaling_factor === "number" ? vaeConfig.scaling_factor : defaultScalingFactor;
    const windowFromShape = inputIds.shape[1];
    const textWindow = typeof windowFromShape === "number" ? windowFromShape
        : typeof tokenizerConfig.model_max_length === "number" && tokenizerConfig.model_max_length < 10_000 ? tokenizerConfig.model_max_length : defaultTextWindow;

    const vocabulary = tokenizer.get_vocab() as Map<string, number> | Record<string, number>;
    const idOf = (token: string | null | undefined) => token == null ? undefined : vocabulary instanceof Map ? vocabulary.get(token) : vocabulary[token];
    const eosTokenId = tokenizer.eos_token_id ?? idOf("<|endoftext|>");
    const bosTokenId = tokenizer.bos_token_id ?? idOf("<|startoftext|>");
    if (eosTokenId == null || bosTokenId == null)
        throw new Error(`${folder}/tokenizer: no <|startoftext|> / <|endoftext|> tokens (not a CLIP tokenizer).`);
    const padTokenId = tokenizer.pad_token_id ?? eosTokenId;

    const fixedBatch = (shape: readonly (number | string)[]) => typeof shape[0] === "number" && shape[0] > 0 ? shape[0] : null;
    const inputs: Record<string, string> = {};
    for (const session of [textEncoder, unet, vaeDecoder])
        for (const info of session.inputs.values())
            inputs[`${path.basename(path.dirname(session.file))}.${info.name}`] = `${info.type}[${info.shape.join(",")}]`;

    return {
        spec, tokenizer, textEncoder, unet, vaeDecoder, previewDecoder,
        io: {
            inputIds, hiddenStates, sample, timestep, encoderHiddenStates, timestepCond,
            unetOutput: outputNamed(unet, "out_sample", 4), latentSample, vaeOutput: outputNamed(vaeDecoder, "sample", 4)
        },
        unetBatch: fixedBatch(sample.shape),
        textBatch: fixedBatch(inputIds.shape),
        padTokenId, eosTokenId, bosTokenId,
        scheduler,
        schedule: trainingSchedule(scheduler),
        describe: {
            nativeWidth: latentSize.width * vaeScaleFactor,
            nativeHeight: latentSize.height * vaeScaleFactor,
            fixedSize, vaeScaleFactor, latentChannels, scalingFactor, textWindow,
            scheduler: {...scheduler},
            inputs
        }
    };
}

/** The output called `name`, else the first output of rank `rank`, else the first output. */
function outputNamed(session: OnnxSession, name: string, rank: number): string {
    if (session.outputs.has(name))
        return name;
    const byRank = [...session.outputs.values()].find((output) => output.shape.length === rank);
    return (byRank ?? [...session.outputs.values()][0]).name;
}

/** diffusers `sample_size`: an integer or [height, width]. */
function sizeOf(value: unknown): {height: number, width: number} | null {
    if (typeof value === "number" && Number.isInteger(value) && value > 0)
        return {height: value, width: value};
    if (Array.isArray(value) && value.length === 2 && value.every((side) => Number.isInteger(side) && side > 0))
        return {height: value[0] as number, width: value[1] as number};
    return null;
}
