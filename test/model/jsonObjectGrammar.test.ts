import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
    getLlama, LlamaGrammarEvaluationState, LlamaLogLevel, type Llama, type LlamaContext, type LlamaGrammar, type LlamaModel, type Token
} from "node-llama-cpp";
import { jsonObjectGrammar } from "../../src/capabilities/chat/llama/jsonObjectGrammar.js";
import { tinyChatModelPath } from "../support/testModels.js";

/**
 * Whether `text` is the start of a JSON object (possibly cut anywhere), with nothing after the object.
 * Also measures the longest run of whitespace between tokens (outside strings).
 */
function checkJsonObjectPrefix(text: string): {ok: boolean, complete: boolean, longestWhitespace: number} {
    class EndOfInput {}
    let at = 0;
    let longestWhitespace = 0;
    const peek = () => {
        if (at >= text.length)
            throw new EndOfInput();
        return text[at];
    };
    const expectChar = (allowed: string) => {
        if (!allowed.includes(peek()))
            throw new SyntaxError(`Unexpected ${JSON.stringify(text[at])} at ${at}, expected one of ${JSON.stringify(allowed)}`);
        return text[at++];
    };
    const whitespace = () => {
        const start = at;
        while (at < text.length && " \t\n\r".includes(text[at]))
            at++;
        longestWhitespace = Math.max(longestWhitespace, at - start);
    };
    const literal = (word: string) => {
        for (const char of word)
            expectChar(char);
    };
    const string = () => {
        expectChar("\"");
        for (;;) {
            const char = peek();
            at++;
            if (char === "\"")
                return;
            if (char < " ")
                throw new SyntaxError(`Control character in a string at ${at - 1}`);
            if (char === "\\") {
                if (expectChar("\"\\/bfnrtu") === "u")
                    for (let i = 0; i < 4; i++)
                        expectChar("0123456789abcdefABCDEF");
            }
        }
    };
    const digits = () => {
        expectChar("0123456789");
        while (at < text.length && /[0-9]/.test(text[at]))
            at++;
    };
    const number = () => {
        if (peek() === "-")
            at++;
        if (peek() === "0")
            at++;
        else
            digits();
        if (at < text.length && text[at] === ".") {
            at++;
            digits();
        }
        if (at < text.length && "eE".includes(text[at])) {
            at++;
            if ("+-".includes(peek()))
                at++;
            digits();
        }
    };
    const value = (): void => {
        const char = peek();
        if (char === "{") object();
        else if (char === "[") array();
        else if (char === "\"") string();
        else if (char === "t") literal("true");
        else if (char === "f") literal("false");
        else if (char === "n") literal("null");
        else number();
    };
    const object = () => {
        expectChar("{");
        whitespace();
        if (peek() === "}") {
            at++;
            return;
        }
        for (;;) {
            string();
            whitespace();
            expectChar(":");
            whitespace();
            value();
            whitespace();
            if (expectChar(",}") === "}")
                return;
            whitespace();
        }
    };
    const array = () => {
        expectChar("[");
        whitespace();
        if (peek() === "]") {
            at++;
            return;
        }
        for (;;) {
            value();
            whitespace();
            if (expectChar(",]") === "]")
                return;
            whitespace();
        }
    };

    try {
        object();
    } catch (error) {
        if (error instanceof EndOfInput)
            return {ok: true, complete: false, longestWhitespace};
        return {ok: false, complete: false, longestWhitespace};
    }
    return {ok: at === text.length, complete: true, longestWhitespace};
}

describe("checkJsonObjectPrefix (the test's own checker)", () => {
    it.each(["", "{", "{\"a", "{\"a\": [1, tr", "{\"a\": {\"b\": -0.5e+1}, \"c\": \"x\\u00", "{}", "{\"a\": [\"b\", null]}"])(
        "accepts %j", (text) => {
            expect(checkJsonObjectPrefix(text).ok).toBe(true);
        });

    it.each(["[", "x", "{a", "{\"a\" 1", "{} ", "{}x", "{\"a\": tru e", "{\"a\": 01}", "{\"a\": [1,]}"])(
        "rejects %j", (text) => {
            expect(checkJsonObjectPrefix(text).ok).toBe(false);
        });

    it("measures whitespace outside strings only", () => {
        expect(checkJsonObjectPrefix("{\"a     b\":\n   1}").longestWhitespace).toBe(4);
    });
});

describe("jsonObjectGrammar on the tiny model", () => {
    let llama: Llama;
    let model: LlamaModel;
    let context: LlamaContext;
    let grammar: LlamaGrammar;

    beforeAll(async () => {
        llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
        model = await llama.loadModel({modelPath: tinyChatModelPath});
        context = await model.createContext({contextSize: 256, threads: 1});
        grammar = await llama.createGrammar({grammar: jsonObjectGrammar});
    });

    afterAll(async () => {
        await context?.dispose();
        await model?.dispose();
    });

    async function generate(seed: number, maxTokens: number) {
        const sequence = context.getSequence();
        try {
            const prompt = [model.tokens.bos!, ...model.tokenize("<|im_start|>user\nReply in JSON<|im_end|>\n<|im_start|>assistant\n", true)];
            const generated: Token[] = [];
            let endedAtEog = false;
            for await (const token of sequence.evaluate(prompt, {
                temperature: 1, topK: 0, topP: 1, minP: 0, seed, yieldEogToken: true,
                grammarEvaluationState: new LlamaGrammarEvaluationState({model, grammar})
            })) {
                if (model.isEogToken(token)) {
                    endedAtEog = true;
                    break;
                }
                generated.push(token);
                if (generated.length >= maxTokens)
                    break;
            }
            return {text: model.detokenize(generated, false, prompt), endedAtEog, hitLimit: generated.length >= maxTokens};
        } finally {
            sequence.dispose();
        }
    }

    it("compiles", () => {
        expect(grammar).toBeDefined();
    });

    const seeds = Array.from({length: 30}, (_, i) => i + 1);
    it("every sampled output is a prefix of one JSON object; the finished ones parse to an object", async () => {
        let finished = 0;
        let finishedWithMembers = 0;
        for (const seed of seeds) {
            const {text, endedAtEog, hitLimit} = await generate(seed, 150);
            const check = checkJsonObjectPrefix(text);
            expect(check.ok, `seed ${seed}: ${JSON.stringify(text)}`).toBe(true);
            expect(check.longestWhitespace, `seed ${seed}: ${JSON.stringify(text)}`).toBeLessThanOrEqual(21);
            expect(text.startsWith("{"), `seed ${seed}`).toBe(true);
            // The grammar admits only EOG after the closing brace, and nothing but the object before it.
            if (endedAtEog)
                expect(check.complete, `seed ${seed}: ${JSON.stringify(text)}`).toBe(true);
            else
                expect(hitLimit, `seed ${seed}`).toBe(true);
            if (endedAtEog) {
                finished++;
                const parsed: unknown = JSON.parse(text);
                expect(parsed !== null && typeof parsed === "object" && !Array.isArray(parsed), `seed ${seed}`).toBe(true);
                if (Object.keys(parsed as object).length > 0)
                    finishedWithMembers++;
            }
        }
        // Otherwise the parse check above would never have run (or only on "{}").
        expect(finished).toBeGreaterThan(0);
        expect(finishedWithMembers).toBeGreaterThan(0);
    }, 120_000);
});
