import type { ChatEngine, ChatRunHooks, ChoiceResult } from "../../src/capabilities/chat/ChatEngine.js";

/**
 * A chat engine for the format converters' unit tests: it calls the run's hooks as `script` says (after `submit`
 * settled, as the real engine does), then finishes each of `results` (`onFinish`) and settles with them.
 */
export function scriptedChatEngine(script: (hooks: ChatRunHooks) => void, results: ChoiceResult | ChoiceResult[], promptTokens = 11): ChatEngine {
    const choices = Array.isArray(results) ? results : [results];
    return {
        info: {id: "scripted", contextSize: 1000, vocabularySize: 100, fingerprint: "fp_1"},
        load: () => ({parallel: 1, busy: 0, waiting: 0}),
        countPromptTokens: async () => 0,
        countTextTokens: () => 0,
        tokenize: async () => ({tokens: []}),
        detokenize: async () => "",
        decide: async () => { throw new Error("not scripted"); },
        dispose: async () => {},
        submit: async (_job, hooks) => ({
            promptTokens,
            done: new Promise((resolve) => setImmediate(() => {
                script(hooks);
                for (const choice of choices)
                    hooks.onFinish?.(choice);
                resolve(choices);
            }))
        })
    };
}
