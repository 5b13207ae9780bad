import { describe, expect, it } from "vitest";
import { ReasoningOutput } from "../../src/capabilities/chat/llama/text/ReasoningOutput.js";
import { toReasoningControls } from "../../src/capabilities/chat/toReasoningControls.js";
import { ReasoningPhase } from "../../src/capabilities/chat/llama/ReasoningPhase.js";
import { thinkingPromptTail } from "../../src/capabilities/chat/llama/thinkingPromptTail.js";

// Thinking models without a model: the pure pieces the engine and the wire formats use.
describe("reasoning_effort", () => {
    it("none and minimal switch thinking off; the others are thought-token budgets; absent is the model's default", () => {
        expect(toReasoningControls(undefined)).toBeNull();
        expect(toReasoningControls("none")).toEqual({enabled: false, budgetTokens: null});
        expect(toReasoningControls("minimal")).toEqual({enabled: false, budgetTokens: null});
        expect(["low", "medium", "high", "xhigh", "max"].map((effort) => toReasoningControls(effort as never)!.budgetTokens)).toEqual([1024, 4096, 16384, 32768, null]);
    });
});

describe("the prompt's tail for a thinking model", () => {
    const qwen3 = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n";
    it("thinking on: an open block stays open, a closed one closed; under a grammar the block is opened; else the model decides", () => {
        expect(thinkingPromptTail("think-tags", {text: qwen3 + "<think>\n"}, {enabled: true, constrained: false})).toEqual({tail: "", start: "reasoning"});
        // A closed block the template wrote (it switched thinking off itself: Hy3's no_think) stays closed, under a grammar too.
        expect(thinkingPromptTail("think-tags", {text: qwen3 + "<think></think>"}, {enabled: true, constrained: true})).toEqual({tail: "", start: "answer"});
        expect(thinkingPromptTail("think-tags", {text: qwen3}, {enabled: true, constrained: true})).toEqual({tail: "<think>\n", start: "reasoning"});
        expect(thinkingPromptTail("think-tags", {text: qwen3}, {enabled: true, constrained: false})).toEqual({tail: "", start: "undecided"});
    });

    it("thinking off: the template's own empty block, else one written; an open block is closed", () => {
        expect(thinkingPromptTail("think-tags", {text: qwen3 + "<think>\n\n</think>\n\n"}, {enabled: false, constrained: false})).toEqual({tail: "", start: "answer"});
        expect(thinkingPromptTail("think-tags", {text: qwen3}, {enabled: false, constrained: true})).toEqual({tail: "<think>\n\n</think>\n\n", start: "answer"});
        // DeepSeek-R1's, QwQ's, Qwen3-2507's open `<think>\n` closed into Qwen3's empty block `<think>\n\n</think>\n\n`.
        expect(thinkingPromptTail("think-tags", {text: qwen3 + "<think>\n"}, {enabled: false, constrained: false})).toEqual({tail: "\n</think>\n\n", start: "answer"});
        expect(thinkingPromptTail("think-tags", {text: qwen3 + "<think>"}, {enabled: false, constrained: false})).toEqual({tail: "\n\n</think>\n\n", start: "answer"});
    });

    it("Mistral's thought ([THINK]...[/THINK], no whitespace around it): opened under a grammar, an empty one with thinking off, an open one closed", () => {
        const ministral = "<s>[SYSTEM_PROMPT]Think.[/SYSTEM_PROMPT][INST]hi[/INST]";
        expect(thinkingPromptTail("mistral", {text: ministral}, {enabled: true, constrained: false})).toEqual({tail: "", start: "undecided"});
        expect(thinkingPromptTail("mistral", {text: ministral}, {enabled: true, constrained: true})).toEqual({tail: "[THINK]", start: "reasoning"});
        expect(thinkingPromptTail("mistral", {text: ministral}, {enabled: false, constrained: false})).toEqual({tail: "[THINK][/THINK]", start: "answer"});
        expect(thinkingPromptTail("mistral", {text: ministral + "[THINK]"}, {enabled: false, constrained: false})).toEqual({tail: "[/THINK]", start: "answer"});
        // The system prompt's own [THINK]...[/THINK] (Ministral-3's default one names the tags) opens nothing.
        expect(thinkingPromptTail("mistral", {text: "[SYSTEM_PROMPT]template:[THINK]x[/THINK]y[/SYSTEM_PROMPT][INST]hi[/INST]"},
            {enabled: true, constrained: false})).toEqual({tail: "", start: "undecided"});
    });

});

describe("ReasoningPhase (token by token, as the engine samples)", () => {
    it("counts the block's tokens, knows when the answer starts, and counts nothing for output that never reasoned", () => {
        const phase = new ReasoningPhase("reasoning");
        for (const piece of ["Hmm", ",", " ok", "</", "think>"])
            phase.push(piece);
        expect(phase.inAnswer).toBe(true);
        expect(phase.thinkingTokens).toBe(5);
        expect(phase.reasoningTokens).toBe(5);
        phase.push("Answer");
        expect(phase.reasoningTokens).toBe(5);

        const undecided = new ReasoningPhase("undecided");
        undecided.push(" ");
        expect(undecided.inAnswer).toBe(false);
        undecided.push("Hello");
        expect(undecided.inAnswer).toBe(true);
        expect(undecided.reasoningTokens).toBe(0);

        const opened = new ReasoningPhase("undecided");
        opened.push("<think>");
        expect(opened.inReasoning).toBe(true);
        opened.push("x");
        expect(opened.thinkingTokens).toBe(1);
        expect(new ReasoningPhase("answer").inAnswer).toBe(true);
    });
});

describe("ReasoningOutput", () => {
    it("splits a thinking model's pieces to the two sinks and returns both; another model's output is all answer", () => {
        const seen: string[] = [];
        const output = new ReasoningOutput("think-tags", "undecided", {reasoning: (text) => seen.push(`r:${text}`), content: (text) => seen.push(`c:${text}`)});
        for (const piece of ["<th", "ink>Let", " me</thi", "nk>\n\nHi", "."])
            output.push(piece);
        expect(output.finish()).toEqual({content: "Hi.", reasoning: "Let me"});
        expect(seen).toEqual(["r:Let", "r: me", "c:Hi", "c:."]);
        const plain = new ReasoningOutput(null, "undecided", {reasoning: () => {}, content: () => {}});
        plain.push("<think>x</think>y");
        expect(plain.finish()).toEqual({content: "<think>x</think>y"});
        const empty = new ReasoningOutput("think-tags", "reasoning", {reasoning: () => {}, content: () => {}});
        empty.push("</think>Answer");
        expect(empty.finish()).toEqual({content: "Answer", reasoning: null});
    });

    it("streams the reasoning trimmed as the whole is, so the streamed pieces joined equal the answer's reasoning", () => {
        // Qwen3's real output: "<think>\n", the thought over several tokens with whitespace inside and at the ends, "\n</think>\n\n".
        for (const pieces of [
            ["<think>", "\n", "Let", " me", " \n", "think", ".", "\n", "\n", "</think>", "\n\n", "Hi"],
            ["<think>\n\n  ", " ", "\n", "A", "  ", "\n</think>", "Hi"],
            ["<think>", " ", "\n", "</think>", "Hi"]
        ]) {
            const streamed: string[] = [];
            const output = new ReasoningOutput("think-tags", "undecided", {reasoning: (text) => streamed.push(text), content: () => {}});
            for (const piece of pieces)
                output.push(piece);
            const {reasoning} = output.finish();
            expect(streamed.join(""), JSON.stringify(pieces)).toBe(reasoning ?? "");
            expect(streamed.every((piece) => piece !== ""), JSON.stringify(pieces)).toBe(true);
        }
    });

    it("logprobs entries follow the text: those of the reasoning, its tags and the whitespace after them never go out", () => {
        const entry = (token: string) => ({token, logprob: -1, bytes: [...new TextEncoder().encode(token)], topLogprobs: []});
        const streamed: string[][] = [];
        const output = new ReasoningOutput("think-tags", "undecided", {reasoning: () => {}, content: (_text, logprobs) => streamed.push((logprobs ?? []).map((e) => e.token))});
        // One token per piece; a partial tag is held back with its entry; "\n\n" after the block is dropped, with its entry.
        for (const token of ["<think>", "Let", " me", "</", "think>", "\n\n", "{\"", "a", "\":", "1", "}"])
            output.push(token, [entry(token)]);
        // A control token (no text) in the answer stays with it.
        output.push("", [entry("<|im_end|>")]);
        const {content, logprobs} = output.finish();
        expect(content).toBe("{\"a\":1}");
        expect(logprobs!.map((e) => e.token)).toEqual(["{\"", "a", "\":", "1", "}", "<|im_end|>"]);
        expect(streamed.flat()).toEqual(logprobs!.map((e) => e.token));
        // Several tokens in one piece (held UTF-8, a stop-sequence prefix): the piece's entries go where its text goes.
        const mixed = new ReasoningOutput("think-tags", "reasoning", {reasoning: () => {}, content: () => {}});
        mixed.push("Hmm", [entry("Hmm")]);
        mixed.push("</think>Yes", [entry("</think>"), entry("Yes")]);
        mixed.push(".", [entry(".")]);
        expect(mixed.finish().logprobs!.map((e) => e.token)).toEqual(["</think>", "Yes", "."]);
        // Harmony: the final channel's text only.
        const harmony = new ReasoningOutput("harmony", "undecided", {reasoning: () => {}, content: () => {}});
        for (const token of ["<|channel|>", "analysis", "<|message|>", "Think", "<|end|>", "<|start|>", "assistant", "<|channel|>", "final", "<|message|>", "Hi", "."])
            harmony.push(token, [entry(token)]);
        expect(harmony.finish()).toMatchObject({content: "Hi.", reasoning: "Think", logprobs: [entry("Hi"), entry(".")]});
        // Without logprobs asked for, none are returned.
        const none = new ReasoningOutput("think-tags", "undecided", {reasoning: () => {}, content: () => {}});
        none.push("Answer");
        expect(none.finish()).toEqual({content: "Answer", reasoning: null});
    });
});

describe("HarmonySplitter (gpt-oss channels)", () => {
    it("analysis is the reasoning, final the answer; the framing reaches neither, whatever the pieces", async () => {
        const { HarmonySplitter } = await import("../../src/capabilities/chat/llama/text/HarmonySplitter.js");
        const text = "<|channel|>analysis<|message|>User greets. Reply.<|end|><|start|>assistant<|channel|>final<|message|>Hello there.";
        for (const size of [1, 3, 7, text.length]) {
            const splitter = new HarmonySplitter("undecided");
            let reasoning = "";
            let content = "";
            for (let at = 0; at < text.length; at += size) {
                const piece = splitter.push(text.slice(at, at + size));
                reasoning += piece.reasoning;
                content += piece.content;
            }
            const rest = splitter.flush();
            expect([reasoning + rest.reasoning, content + rest.content]).toEqual(["User greets. Reply.", "Hello there."]);
        }
        const opened = new HarmonySplitter("reasoning");
        // contentRanges: where the answer is in the text pushed (for the logprobs of its tokens).
        expect(opened.push("Thinking<|end|><|start|>assistant<|channel|>final<|message|>Done")).toEqual({reasoning: "Thinking", content: "Done", contentRanges: [[60, 64]]});
        // A tool preamble on the commentary channel is answer text; output without framing is all answer.
        expect(new HarmonySplitter("undecided").push("<|channel|>commentary<|message|>Checking.")).toEqual({reasoning: "", content: "Checking.", contentRanges: [[32, 41]]});
        expect(new HarmonySplitter("undecided").push("Plain answer")).toEqual({reasoning: "", content: "Plain answer", contentRanges: [[0, 12]]});
    });

    it("where a harmony prompt's output starts", () => {
        const prompt = "<|start|>user<|message|>hi<|end|><|start|>assistant";
        expect(thinkingPromptTail("harmony", {text: prompt}, {enabled: false, constrained: false})).toEqual({tail: "<|channel|>final<|message|>", start: "answer"});
        expect(thinkingPromptTail("harmony", {text: prompt}, {enabled: true, constrained: true})).toEqual({tail: "<|channel|>analysis<|message|>", start: "reasoning"});
        expect(thinkingPromptTail("harmony", {text: prompt}, {enabled: true, constrained: false})).toEqual({tail: "", start: "undecided"});
    });
});

describe("HarmonySplitter as llama.cpp renders gpt-oss's output", () => {
    it("<|end|> is a control token (no text): the next <|start|> ends the analysis", async () => {
        const { HarmonySplitter } = await import("../../src/capabilities/chat/llama/text/HarmonySplitter.js");
        const splitter = new HarmonySplitter("undecided");
        const pieces = ["<|channel|>", "analysis", "<|message|>", "Think", "ing.", "", "<|start|>", "assistant", "<|channel|>", "final", "<|message|>", "Hi", "."];
        const out = pieces.map((piece) => splitter.push(piece));
        expect(out.map((piece) => piece.reasoning).join("")).toBe("Thinking.");
        expect(out.map((piece) => piece.content).join("")).toBe("Hi.");
    });
});

describe("HarmonySplitter: gpt-oss's calls (a message addressed to a function)", () => {
    const split = async (pieces: readonly string[], start: "undecided" | "call" = "undecided", ended = true) => {
        const { HarmonySplitter } = await import("../../src/capabilities/chat/llama/text/HarmonySplitter.js");
        const splitter = new HarmonySplitter(start);
        const out = [...pieces.map((piece) => splitter.push(piece)), splitter.flush(ended)];
        return [out.map((piece) => piece.reasoning).join(""), out.map((piece) => piece.content).join("")];
    };
    const call = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>';

    it("goes to the answer in one form, however the header is written and whatever the pieces", async () => {
        // As gpt-oss writes it (the recipient in the channel's header), as its template renders a past call (in the
        // role's header, no <|constrain|>), and without the analysis before it.
        const written = [
            '<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}',
            '<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}',
            ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}'
        ];
        for (const text of written)
            for (const size of [1, 4, text.length]) {
                const pieces = Array.from({length: Math.ceil(text.length / size)}, (_, index) => text.slice(index * size, (index + 1) * size));
                const [reasoning, content] = await split(pieces);
                expect(content).toBe(call);
                expect(reasoning).toBe(text.includes("analysis") ? "Need weather." : "");
            }
    });

    it("ends only where the model ended it: not at the token limit", async () => {
        const [, cut] = await split(['<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Pa'], "undecided", false);
        expect(cut).toBe('<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Pa');
        // A <|call|> written as text ends it too, and a preamble before the call stays answer text before it.
        const [, preamble] = await split(["<|channel|>commentary<|message|>Checking.<|end|><|start|>assistant" + call], "undecided", false);
        expect(preamble).toBe("Checking." + call);
    });

    it("a forced call the prompt opened (up to the name) goes on from there", async () => {
        const [reasoning, content] = await split(["get_", 'weather <|constrain|>json<|message|>{"city": "Paris"}'], "call");
        expect([reasoning, content]).toEqual(["", call]);
    });
});
