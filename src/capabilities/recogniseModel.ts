import type { CapabilityManifest } from "./CapabilityManifest.js";
import type { ModelRecognition } from "./ModelRecognition.js";
import { unservedModels, type UnservedKind } from "./unservedModels.js";

/** What a model's files (or the hub) say about it; a fact not known is left out. */
export type ModelFacts = {
    /** A GGUF file (or a hub repository whose chosen file is one). */
    gguf: boolean;
    /** The files of the folder (or the hub repository's top level) among those some capability looks for. */
    folderFiles?: readonly string[];
    /** `config.json` `architectures`. */
    architectures?: readonly string[];
    /** `config.json` `model_type`. */
    modelType?: string;
    /** GGUF `<architecture>.pooling_type`. */
    ggufPoolingType?: number;
    /** GGUF `general.architecture`. */
    ggufArchitecture?: string;
    /** The hub's `pipeline_tag`. */
    pipelineTag?: string;
};

/** The task of the model, or why no task (a sentence to follow the model's name). */
export type Recognition<Task extends string> = {task: Task} | {refused: string};

type Step = {
    /** The fact as a message names it, e.g. `config.json model_type`. */
    fact: string;
    values: readonly (string | number)[];
    claimed: (recognition: ModelRecognition) => readonly (string | number)[] | undefined;
    unserved?: (kind: UnservedKind, value: string | number) => boolean;
};

/**
 * The task of a model, from the capabilities' own recognition rules (`ModelRecognition`), asking its facts from
 * the most specific to the least: the first fact a capability claims decides (two claiming it: refused, naming
 * both); a fact that says it is a kind no capability serves (`unservedModels.ts`) refuses it, before a broader
 * fact could take it; a GGUF no fact decides goes to the capability serving any other GGUF. Pure.
 */
export function recogniseModel<Part extends CapabilityManifest>(facts: ModelFacts, parts: readonly Part[]): Recognition<Part["task"]> {
    const steps: Step[] = [
        {fact: "a", values: facts.folderFiles ?? [], claimed: (rule) => rule.folderFiles},
        {fact: "config.json architectures", values: facts.architectures ?? [], claimed: (rule) => rule.architectures,
            unserved: (kind, value) => kind.architectureSuffixes?.some((suffix) => String(value).endsWith(suffix)) ?? false},
        {fact: "config.json model_type", values: facts.modelType != null ? [facts.modelType] : [], claimed: (rule) => rule.modelTypes},
        {fact: "GGUF pooling type", values: facts.ggufPoolingType != null ? [facts.ggufPoolingType] : [], claimed: (rule) => rule.ggufPoolingTypes,
            unserved: (kind, value) => kind.ggufPoolingTypes?.includes(value as number) ?? false},
        {fact: "GGUF architecture", values: facts.ggufArchitecture != null ? [facts.ggufArchitecture] : [], claimed: (rule) => rule.ggufArchitectures,
            unserved: (kind, value) => kind.ggufArchitectures?.includes(value as string) ?? false},
        {fact: "hub pipeline_tag", values: facts.pipelineTag != null ? [facts.pipelineTag] : [], claimed: (rule) => rule.pipelineTags,
            unserved: (kind, value) => kind.pipelineTags?.includes(value as string) ?? false}
    ];
    for (const step of steps) {
        for (const value of step.values) {
            const said = `${step.fact} ${value}`;
            const claiming = parts.filter((part) => step.claimed(part.recognise ?? {})?.includes(value) ?? false);
            if (claiming.length === 1)
                return {task: claiming[0].task};
            if (claiming.length > 1)
                return {refused: `is claimed by more than one capability (${said}): ${claiming.map((part) => `'${part.task}'`).join(" and ")}. ` +
                    "Their recognition rules must not overlap; a models.json manifest names the task meanwhile."};
            const kind = step.unserved == null ? undefined : unservedModels.find((candidate) => step.unserved!(candidate, value));
            if (kind != null)
                return {refused: `is ${kind.is} (${said}).`};
        }
    }
    if (facts.gguf) {
        const fallback = parts.filter((part) => part.recognise?.anyOtherGguf === true);
        if (fallback.length === 1)
            return {task: fallback[0].task};
        if (fallback.length > 1)
            return {refused: `is claimed by more than one capability (any other GGUF): ${fallback.map((part) => `'${part.task}'`).join(" and ")}.`};
    }
    const said = steps.filter((step) => step.values.length > 0).map((step) => `${step.fact} ${step.values.join(", ")}`);
    return {refused: `${said.length > 0 ? `says ${said.join("; ")}, which no capability serves` : "says nothing a capability recognises its models by"} (${describeRecognition(parts)}). ` +
        "Write a models.json manifest to name its task."};
}

/** What each capability recognises, for a message: `embeddings: model_type bert, roberta; ...`. */
function describeRecognition(parts: readonly CapabilityManifest[]): string {
    return parts.flatMap((part) => {
        const rule = part.recognise ?? {};
        const said = [
            rule.folderFiles != null ? `a ${rule.folderFiles.join(" or ")}` : null,
            rule.architectures != null ? `architectures ${rule.architectures.join(", ")}` : null,
            rule.modelTypes != null ? `model_type ${rule.modelTypes.join(", ")}` : null,
            rule.ggufPoolingTypes != null ? `GGUF pooling type ${rule.ggufPoolingTypes.join(", ")}` : null,
            rule.ggufArchitectures != null ? `GGUF architecture ${rule.ggufArchitectures.join(", ")}` : null,
            rule.anyOtherGguf === true ? "any other GGUF" : null,
            rule.pipelineTags != null ? `pipeline_tag ${rule.pipelineTags.join(", ")}` : null
        ].filter((text) => text != null);
        return said.length > 0 ? [`${part.task}: ${said.join("; ")}`] : [];
    }).join(" | ");
}
