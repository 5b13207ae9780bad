import { loadManifest } from "../core/registry/loadManifest.js";
import type { ManifestSettings } from "../core/registry/ManifestSettings.js";
import type { ModelEntry } from "../core/registry/ModelEntry.js";
import type { CapabilityManifest } from "./CapabilityManifest.js";
import { manifestParts } from "./manifestParts.js";

/** Each task's own manifest fields, as the manifest loader takes them. */
export function settingsOf(capabilities: readonly CapabilityManifest[]): Record<string, ManifestSettings<unknown> | undefined> {
    return Object.fromEntries(capabilities.map((capability) => [capability.task, capability.manifest as ManifestSettings<unknown> | undefined]));
}

/** Reads a manifest as this server serves it: the tasks of `capabilities`, each with its own fields. */
export function loadServedManifest(manifestPath: string, capabilities: readonly CapabilityManifest[] = manifestParts): ModelEntry[] {
    return loadManifest(manifestPath, settingsOf(capabilities));
}
