/**
 * The model's chat template refused the conversation (its own `raise_exception`, e.g. "roles must alternate"): the
 * request's messages have a shape this model's template does not take.
 */
export class TemplateRefusedError extends Error {
    /** `param`: what the template refused, the conversation (`messages`) or its variables (`chat_template_kwargs`). */
    constructor(readonly templateMessage: string, readonly param: "messages" | "chat_template_kwargs" = "messages") {
        super(param === "messages" ? `The model's chat template does not take this conversation: ${templateMessage}`
            : `The model's chat template does not take these chat_template_kwargs: ${templateMessage}`);
        this.name = "TemplateRefusedError";
    }
}
