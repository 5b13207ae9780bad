/**
 * The system error code of a thrown error (`ECONNREFUSED`, `ENOSPC`...), where node puts it: on the error itself, on
 * fetch's `cause`, or on the first of an `AggregateError` cause (a host with several addresses, each refused).
 */
export function errorCodeOf(error: unknown): string | undefined {
    const candidates = [error, (error as {cause?: unknown})?.cause, ((error as {cause?: {errors?: unknown[]}})?.cause?.errors ?? [])[0]];
    for (const candidate of candidates) {
        const code = (candidate as {code?: unknown})?.code;
        if (typeof code === "string")
            return code;
    }
    return undefined;
}
