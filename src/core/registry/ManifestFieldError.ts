/** Thrown by a capability's manifest parser: `field` of the entry at fault, `message` what is wrong with it. */
export class ManifestFieldError extends Error {
    constructor(readonly field: string, message: string) {
        super(message);
        this.name = "ManifestFieldError";
    }
}
