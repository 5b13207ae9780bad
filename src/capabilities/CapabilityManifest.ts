import type { ManifestSettings } from "../core/registry/ManifestSettings.js";
import type { ModalitiesOf } from "../core/registry/Modalities.js";
import type { SettingsTable } from "../settings/Setting.js";
import type { ModelRecognition } from "./ModelRecognition.js";

/**
 * What a capability says about its models, apart from what serves them: its manifest `task`, the
 * endpoints its models are listed with, the manifest fields only its entries have, and how its models are
 * recognised from their files and the hub. The manifest
 * loader and the downloader import only these parts (`capabilityList.ts`, `manifestParts.ts`), never a handler, an engine
 * or a codec (nor sharp, ONNX Runtime or node-llama-cpp with them).
 */
export type CapabilityManifest<Settings = unknown> = {
    /** The manifest `task` of its models. */
    task: string;
    /** Listed per model in /v1/models. */
    endpoints: readonly string[];
    /** What one of its models takes in and gives out, listed per model in /v1/models (`architecture`); none = not listed. */
    modalities?: ModalitiesOf;
    /** Manifest fields only its models have; none = only the common ones. */
    manifest?: ManifestSettings<Settings>;
    /** Server-wide settings only it reads (flags and environment variables, e.g. chat's `--draft-max`): rows of src/config.ts's table, in `Config`. */
    settings?: SettingsTable;
    /** How its models are told from their files (`npm start -- <paths>`) and the hub (`download-models -- <repo>`); none = named by a manifest only. */
    recognise?: ModelRecognition;
};
