import crypto from "node:crypto";
import type { ResponseIds } from "./toResponse.js";

/** An id of the Responses API: its prefix (`resp`, `msg`, `fc`...) and 32 random hex digits. */
export const randomId = (prefix: string) => `${prefix}_${crypto.randomBytes(16).toString("hex")}`;

/** The ids of one response's items: a call's ids made when first asked for (by the stream or the finished output). */
export function idsFor(responseId: string): ResponseIds {
    const calls = new Map<number, {id: string, callId: string}>();
    return {
        response: responseId,
        message: randomId("msg"),
        reasoning: randomId("rs"),
        call: (index, kind) => {
            let ids = calls.get(index);
            if (ids == null)
                calls.set(index, ids = {id: randomId(kind === "custom" ? "ctc" : "fc"), callId: randomId("call")});
            return ids;
        }
    };
}

