import { capabilityList } from "./capabilityList.js";

/**
 * The manifest part of every capability in `capabilityList.ts`, in its order: what the manifest loader and the
 * downloader import, without any server code.
 */
export const manifestParts = capabilityList.map((line) => line.manifest);

/** A task this server serves. */
export type ServedTask = typeof capabilityList[number]["manifest"]["task"];
