import { describe, expect, it } from "vitest";

// The page's modules are plain JavaScript, type-checked on their own (tsc -p playground); here it is loaded as such.
const decideModule = "../../playground/decide.js";
const {parseQuestion} = await import(decideModule) as {parseQuestion: (line: string) => unknown};

describe("the playground's Decide tab", () => {
    it("reads a question per line in its three spellings, and nothing else", () => {
        expect(parseQuestion("yes/no: The customer asks for a refund.")).toEqual({type: "predicate", instructions: "The customer asks for a refund."});
        expect(parseQuestion("choice: Which team? | billing, shipping ,product")).toEqual({type: "choice", instructions: "Which team?", choices: [{value: "billing"}, {value: "shipping"}, {value: "product"}]});
        expect(parseQuestion("Score: How angry? | calm, angry")).toEqual({type: "score", instructions: "How angry?", levels: [{label: "calm"}, {label: "angry"}]});
        expect(parseQuestion("just text")).toBeNull();
    });
});
