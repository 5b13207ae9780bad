/**
 * The model's chat template refused the conversation (its own `raise_exception`, e.g. "roles must alternate"): the
 * request's messages have a shape this model's template does not take.
 */
export class TemplateRefusedError extends Error {
    constructor(readonly templateMessage: string) {
        super(`The model's chat template does not take this conversation: ${templateMessage}`);
        this.name = "TemplateRefusedError";
    }
}
