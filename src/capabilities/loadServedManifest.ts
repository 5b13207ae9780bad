import { loadManifest } from "../core/registry/loadManifest.js";
import type { ModelEntry } from "../core/registry/ModelEntry.js";
import type { Capability } from "./Capability.js";
import { capabilities as servedCapabilities } from "./capabilities.js";

/** Reads a manifest as this server serves it: the tasks of `capabilities`, each with its own fields. */
export function loadServedManifest(manifestPath: string, capabilities: readonly Capability[] = servedCapabilities): ModelEntry[] {
    return loadManifest(manifestPath, Object.fromEntries(capabilities.map((capability) => [capability.task, capability.manifest])));
}
