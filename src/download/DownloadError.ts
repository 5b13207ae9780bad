/**
 * What went wrong, for the caller to decide what to do next:
 * - `network`: the hub could not be reached or the connection broke (a `.part` is kept for resume);
 *   fatal for the whole run, since the next file would fail the same way.
 * - `disk`: no space (or no permission) to write; also fatal for the run.
 * - `auth`, `notFound`, `checksum`, `http`: this model failed; the others can still be fetched.
 * - `catalogue`, `manifest`: a file in the repo or in models/ is wrong; `usage`: a bad command line.
 */
export type DownloadErrorKind = "network" | "disk" | "auth" | "notFound" | "checksum" | "http" | "catalogue" | "manifest" | "usage";

/** A failure with a message a user can act on; the CLI prints the message only, never a stack. */
export class DownloadError extends Error {
    readonly kind: DownloadErrorKind;
    /** Worth trying again in a moment (a busy hub: 429, 5xx). */
    readonly retryable: boolean;

    constructor(kind: DownloadErrorKind, message: string, options: {retryable?: boolean} = {}) {
        super(message);
        this.name = "DownloadError";
        this.kind = kind;
        this.retryable = options.retryable ?? false;
    }

    get fatal() {
        return this.kind === "network" || this.kind === "disk" || this.kind === "catalogue" || this.kind === "manifest" || this.kind === "usage";
    }
}
