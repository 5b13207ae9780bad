/** A draft model whose vocabulary the target model cannot verify (a load error: the server does not start with it). */
export class IncompatibleDraftModelError extends Error {
    constructor(readonly draftModel: string, readonly targetModel: string, reason: string) {
        super(`Draft model '${draftModel}' cannot draft for '${targetModel}': their vocabularies differ (${reason.replace(/\.$/, "")})`);
        this.name = "IncompatibleDraftModelError";
    }
}
