export class TooManyChoicesError extends Error {
    constructor(readonly modelId: string, readonly requested: number, readonly parallel: number) {
        super(`'n' is ${requested}, but model '${modelId}' is configured with ${parallel} parallel sequence${parallel === 1 ? "" : "s"}, and each choice needs its own.`);
        this.name = "TooManyChoicesError";
    }
}
