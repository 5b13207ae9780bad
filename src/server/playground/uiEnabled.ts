import { isLoopbackHost } from "../isLoopbackHost.js";

/**
 * Whether the playground is served: `auto` serves it on a loopback address, or beyond it when API keys
 * protect the server (the page then asks for a key); beyond loopback without keys it stays off.
 */
export function uiEnabled(setting: "on" | "off" | "auto", host: string, hasKeys: boolean): boolean {
    if (setting !== "auto")
        return setting === "on";
    return isLoopbackHost(host) || hasKeys;
}
