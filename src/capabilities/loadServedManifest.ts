import { loadManifest } from "../core/registry/loadManifest.js";
import type { ModelEntry } from "../core/registry/ModelEntry.js";
import type { CapabilityManifest } from "./CapabilityManifest.js";
import { manifestParts } from "./manifestParts.js";

/** Reads a manifest as this server serves it: the tasks of `capabilities`, each with its own fields. */
export function loadServedManifest(manifestPath: string, capabilities: readonly CapabilityManifest[] = manifestParts): ModelEntry[] {
    return loadManifest(manifestPath, Object.fromEntries(capabilities.map((capability) => [capability.task, capability.manifest])));
}
