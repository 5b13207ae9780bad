/**
 * The test-only reverse capability's manifest part: its task, endpoint, manifest fields and how its models are
 * recognised (an ONNX-style folder whose config.json says `model_type` "reverser", a hub repository tagged
 * "text-reversal"), as a built-in capability's `<name>ManifestPart.ts` says them.
 */
import type { CapabilityManifest } from "../../../../src/capabilities/CapabilityManifest.js";
import { ManifestFieldError } from "../../../../src/core/registry/ManifestFieldError.js";

export type ReverseSettings = {repeat: number, maxLength: number};

export const reverseManifestPart = {
    task: "reverse" as const,
    endpoints: ["/v1/reverse"],
    manifest: {
        properties: {repeat: {type: "integer", minimum: 1, maximum: 5}, maxLength: {type: "integer", minimum: 1}},
        parse(fields: {repeat?: number, maxLength?: number}) {
            if (fields.repeat != null && fields.maxLength != null && fields.repeat > fields.maxLength)
                throw new ManifestFieldError("repeat", "cannot be more than 'maxLength'.");
            return {repeat: fields.repeat ?? 1, maxLength: fields.maxLength ?? 100};
        }
    },
    recognise: {modelTypes: ["reverser"], pipelineTags: ["text-reversal"]}
} satisfies CapabilityManifest<ReverseSettings>;
