import type { SettingValues, SettingsTable } from "../settings/Setting.js";
import type { serverSettings } from "../settings/serverSettings.js";
import type { CapabilityManifest } from "./CapabilityManifest.js";
import { manifestParts } from "./manifestParts.js";

/** The rows every capability's manifest part adds to the server's table of settings (`settings`), in the list's order. */
export const capabilitySettings: SettingsTable = Object.assign({}, ...(manifestParts as readonly CapabilityManifest[]).map((part) => part.settings ?? {}));

type UnionToIntersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void ? I : never;
type PartSettings<Part> = Part extends {settings: infer Table extends SettingsTable} ? SettingValues<Table> : never;

/**
 * Every setting as a capability's engines and routes read it: the server's own (`--threads`, `--queue-size`, ...)
 * and each capability's rows; src/config.ts's `Config` is this and the model paths.
 */
export type CapabilityConfig = SettingValues<typeof serverSettings> & UnionToIntersection<PartSettings<typeof manifestParts[number]>>;
