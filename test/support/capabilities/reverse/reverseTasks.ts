/** The fake capability's worker task module: reverses text one character per step, reporting each step. */
import type { TaskContext, TaskModule } from "../../../../src/core/workers/WorkerTask.js";

export const tasks = {
    reverse: (payload: {text: string, repeat: number}, context: TaskContext<{step: number, steps: number, partial: string}>) => {
        const characters = [...payload.text];
        let reversed = "";
        for (let step = 0; step < characters.length; step++) {
            context.throwIfCancelled();
            reversed = characters[step] + reversed;
            context.progress({step: step + 1, steps: characters.length, partial: reversed});
        }
        return {text: reversed.repeat(payload.repeat)};
    }
} satisfies TaskModule;
