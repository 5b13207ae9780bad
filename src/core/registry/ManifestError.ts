/** The manifest cannot be served: the message names the file and the offending field. */
export class ManifestError extends Error {
    constructor(message: string) {
        super(message);
        this.name = "ManifestError";
    }
}
