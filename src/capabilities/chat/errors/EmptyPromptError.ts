export class EmptyPromptError extends Error {
    constructor() {
        super("The prompt is empty: it has no tokens (this model adds no BOS token to start from).");
        this.name = "EmptyPromptError";
    }
}
