import { DownloadError } from "./DownloadError.js";
import { errorCodeOf } from "./errorCodeOf.js";

const unreachable = new Set(["ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ENETUNREACH", "EHOSTUNREACH", "ETIMEDOUT", "UND_ERR_CONNECT_TIMEOUT"]);

/**
 * A request to `host` that could not connect, as the DownloadError that says what to check: the host cannot be reached
 * (no network, a wrong HF_ENDPOINT), or its TLS certificate cannot be verified (an inspecting proxy). Null for any
 * other failure. The one wording of these, whatever was being fetched (a file, a repository's tree).
 */
export function connectionFailure(error: unknown, host: string): DownloadError | null {
    const code = errorCodeOf(error);
    // fetch refuses some ports outright (the "bad ports" of the Fetch standard), before any connection.
    if (code != null && unreachable.has(code) || ((error as {cause?: {message?: unknown}})?.cause)?.message === "bad port")
        return new DownloadError("network", `Cannot reach ${host} (${code ?? "a port fetch refuses to use"}): check the network, or set HF_ENDPOINT to a reachable mirror.`);
    if (code != null && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code))
        return new DownloadError("network", `Cannot verify the TLS certificate of ${host} (${code}). Behind an inspecting proxy, set NODE_EXTRA_CA_CERTS to its CA certificate.`);
    return null;
}
