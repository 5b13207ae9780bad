/** Thrown inside a worker by `TaskContext.throwIfCancelled()`; never reaches a client as such. */
export class TaskCancelledError extends Error {
    constructor() {
        super("The task was cancelled.");
        this.name = "TaskCancelledError";
    }
}
