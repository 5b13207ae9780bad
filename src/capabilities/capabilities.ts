import type { Capability } from "./Capability.js";
import { capabilityList } from "./capabilityList.js";

/**
 * The server parts of every capability in `capabilityList.ts` (handlers, engines, codecs), loaded, in the
 * list's order; each must serve the task and endpoints its manifest part declares.
 */
export async function loadCapabilities(): Promise<readonly Capability[]> {
    return Promise.all(capabilityList.map(async ({manifest, server}) => {
        const capability = await server();
        if (capability.task !== manifest.task || capability.endpoints !== manifest.endpoints || capability.manifest !== ("manifest" in manifest ? manifest.manifest : undefined))
            throw new Error(`The server part of capability '${manifest.task}' does not match its manifest part (task '${capability.task}')`);
        return capability;
    }));
}
