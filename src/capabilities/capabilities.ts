import type { Capability } from "./Capability.js";
import type { CapabilityManifest } from "./CapabilityManifest.js";
import { capabilityList } from "./capabilityList.js";

/** One line of `capabilityList.ts`: a capability's manifest part, and how to load its server part. */
export type CapabilityLine = {manifest: CapabilityManifest, server: () => Promise<Capability>};

/**
 * The server parts of every capability in `capabilityList.ts` (handlers, engines, codecs), loaded, in the
 * list's order; each must serve the task and endpoints its manifest part declares (the tests pass a longer list).
 */
export async function loadCapabilities(list: readonly CapabilityLine[] = capabilityList): Promise<readonly Capability[]> {
    return Promise.all(list.map(async ({manifest, server}) => {
        const capability = await server();
        if (capability.task !== manifest.task || capability.endpoints !== manifest.endpoints || capability.manifest !== manifest.manifest || capability.recognise !== manifest.recognise || capability.modalities !== manifest.modalities)
            throw new Error(`The server part of capability '${manifest.task}' does not match its manifest part (task '${capability.task}')`);
        return capability;
    }));
}
