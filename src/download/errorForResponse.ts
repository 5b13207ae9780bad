import { DownloadError } from "./DownloadError.js";

/** What is being fetched, for messages. */
export type FileContext = {endpoint: string; repo: string; revision: string; path: string; tokenSet: boolean};

/**
 * A hub answer that is not the file, as an actionable DownloadError. The hub explains itself in
 * `X-Error-Code` (`GatedRepo`, `RepoNotFound`, `RevisionNotFound`, `EntryNotFound`) and
 * `X-Error-Message`; both are used when present. Note the hub answers 401 (not 404) for a repo
 * that does not exist or is private when no token is sent.
 */
export function errorForResponse(response: Response, file: FileContext): DownloadError {
    const code = response.headers.get("x-error-code");
    const hubSays = response.headers.get("x-error-message");
    const detail = `${response.status}${code != null ? ` ${code}` : ""}${hubSays != null ? `: ${hubSays}` : ""}`;
    const page = `${file.endpoint}/${file.repo}`;
    const what = `${file.repo} (file ${file.path} at revision ${file.revision})`;

    if (response.status === 401 || response.status === 403) {
        if (!file.tokenSet)
            return new DownloadError("auth", `${what} is gated or private (${detail}). Accept its licence at ${page} while logged in, ` +
                "then set HF_TOKEN to an access token from https://huggingface.co/settings/tokens and run again.");
        if (response.status === 401)
            return new DownloadError("auth", `The hub rejected HF_TOKEN for ${what} (${detail}). Check that the token is valid and not expired.`);
        return new DownloadError("auth", `HF_TOKEN has no access to ${what} (${detail}). The model is gated: accept its licence at ${page} with the account the token belongs to.`);
    }
    if (response.status === 404) {
        if (code === "RepoNotFound")
            return new DownloadError("notFound", `Repo ${file.repo} not found on ${file.endpoint} (${detail}). The catalogue entry's repo is wrong, or HF_ENDPOINT points at a mirror without it.`);
        if (code === "RevisionNotFound")
            return new DownloadError("notFound", `Revision ${file.revision} of ${file.repo} not found (${detail}). The catalogue's pinned commit is wrong.`);
        return new DownloadError("notFound", `Not found: ${what} (${detail}). The catalogue lists a file the repo does not have at that revision.`);
    }
    if (response.status === 429 || response.status >= 500)
        return new DownloadError("http", `${new URL(response.url || file.endpoint).host} answered ${detail} for ${what}. The hub is busy or down; try again later.`, {retryable: true});
    return new DownloadError("http", `Unexpected answer ${detail} for ${what}.`);
}
