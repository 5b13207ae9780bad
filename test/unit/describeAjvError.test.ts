import { describe, expect, it } from "vitest";
import { createAjv } from "../../src/core/validation/createAjv.js";
import { describeAjvError, instancePathToParam } from "../../src/core/validation/describeAjvError.js";

const ajv = createAjv();

/** Validates `data` against `schema` with the server's Ajv setup and describes the first error. */
function describeFirst(schema: object, data: unknown) {
    const validate = ajv.compile(schema);
    expect(validate(data)).toBe(false);
    return describeAjvError(validate.errors?.[0], data);
}

const requestSchema = {
    type: "object",
    required: ["model", "messages"],
    additionalProperties: false,
    properties: {
        model: {type: "string"},
        messages: {
            type: "array",
            items: {
                type: "object",
                required: ["role"],
                properties: {
                    role: {enum: ["system", "user", "assistant"]},
                    content: {type: "string"}
                }
            }
        },
        temperature: {type: ["number", "null"], minimum: 0, maximum: 2},
        n: {type: "integer", minimum: 1},
        stop: {type: "array", maxItems: 4, items: {type: "string"}},
        logit_bias: {
            type: "object",
            propertyNames: {pattern: "^(0|[1-9][0-9]{0,9})$"},
            additionalProperties: {type: "number", minimum: -100, maximum: 100}
        }
    }
};

const valid = {model: "m", messages: [{role: "user", content: "hi"}]};

describe("describeAjvError: which field (param)", () => {
    it("required: names the missing field, nested in an array item", () => {
        expect(describeFirst(requestSchema, {messages: []})).toEqual({param: "model", message: "Missing required parameter: 'model'."});
        const nested = describeFirst(requestSchema, {model: "m", messages: [{role: "user"}, {content: "x"}]});
        expect(nested).toEqual({param: "messages[1].role", message: "Missing required parameter: 'messages[1].role'."});
    });

    it("additionalProperties: names the unknown field", () => {
        expect(describeFirst(requestSchema, {...valid, temprature: 1}))
            .toEqual({param: "temprature", message: "Unrecognized parameter: 'temprature'."});
    });

    it("a type error deep in an array names the exact item", () => {
        const data = {model: "m", messages: [{role: "user", content: "a"}, {role: "user", content: "b"}, {role: "user", content: 42}]};
        expect(describeFirst(requestSchema, data).param).toBe("messages[2].content");
    });

    it("a numeric object key reads .50256, not [50256]", () => {
        const result = describeFirst(requestSchema, {...valid, logit_bias: {"50256": 200}});
        expect(result.param).toBe("logit_bias.50256");
        expect(result.message).toContain("'logit_bias.50256'");
    });

    it("propertyNames: names the bad key and says why", () => {
        const result = describeFirst(requestSchema, {...valid, logit_bias: {"abc": 1}});
        expect(result.param).toBe("logit_bias.abc");
        expect(result.message).toBe(`Invalid key "abc" in 'logit_bias': must match pattern "^(0|[1-9][0-9]{0,9})$".`);
    });

    it("propertyNames at the top level has no parent to name", () => {
        const result = describeFirst({type: "object", propertyNames: {maxLength: 3}}, {long_key: 1});
        expect(result.param).toBe("long_key");
        expect(result.message).toMatch(/^Invalid key "long_key" in the request body: /);
    });

    it("an error about the whole body has param null", () => {
        const result = describeFirst(requestSchema, "not an object");
        expect(result.param).toBeNull();
        expect(result.message).toMatch(/^Invalid type for the request body: expected an object/);
    });

    it("undoes JSON-pointer escapes (~1 is '/', ~0 is '~')", () => {
        const schema = {type: "object", properties: {"a/b": {type: "object", properties: {"c~d": {type: "integer"}}}}};
        expect(describeFirst(schema, {"a/b": {"c~d": "x"}}).param).toBe("a/b.c~d");
        expect(instancePathToParam("/a~1b/c~0d", {})).toBe("a/b.c~d");
        // "~01" is the escaped form of the literal text "~1".
        expect(instancePathToParam("/x~01", {})).toBe("x~1");
    });

    it("instancePathToParam walks the data to tell array indexes from object keys", () => {
        const data = {messages: [{content: [{text: 1}]}], logit_bias: {"7": "x"}};
        expect(instancePathToParam("/messages/0/content/0/text", data)).toBe("messages[0].content[0].text");
        expect(instancePathToParam("/logit_bias/7", data)).toBe("logit_bias.7");
        expect(instancePathToParam("", data)).toBeNull();
    });

    it("no error at all gives a generic message", () => {
        expect(describeAjvError(undefined, {})).toEqual({message: "Invalid request.", param: null});
    });
});

// What the client reads: the messages quote the value that was sent.
describe("describeAjvError: messages quote the offending value", () => {
    it("type: says what was expected and what came instead", () => {
        expect(describeFirst(requestSchema, {...valid, model: 5}))
            .toEqual({param: "model", message: "Invalid type for 'model': expected a string, but got an integer instead."});
        expect(describeFirst(requestSchema, {...valid, n: 1.5}).message)
            .toBe("Invalid type for 'n': expected an integer, but got a decimal instead.");
        expect(describeFirst(requestSchema, {...valid, temperature: "hot"}).message)
            .toBe("Invalid type for 'temperature': expected a number or a null, but got a string instead.");
    });

    it("minimum/maximum: quotes the value and the limit", () => {
        expect(describeFirst(requestSchema, {...valid, temperature: 3}))
            .toEqual({param: "temperature", message: "Invalid value for 'temperature': 3 is above the maximum of 2."});
        expect(describeFirst(requestSchema, {...valid, temperature: -0.5}).message)
            .toBe("Invalid value for 'temperature': -0.5 is below the minimum of 0.");
        expect(describeFirst(requestSchema, {...valid, logit_bias: {"50256": 200}}).message)
            .toBe("Invalid value for 'logit_bias.50256': 200 is above the maximum of 100.");
    });

    it("enum: quotes the value and lists the allowed ones", () => {
        expect(describeFirst(requestSchema, {model: "m", messages: [{role: "robot"}]})).toEqual({
            param: "messages[0].role",
            message: `Invalid value for 'messages[0].role': "robot". Supported values are: "system", "user", "assistant".`
        });
    });

    it("maxItems: gives the limit and the length that was sent", () => {
        expect(describeFirst(requestSchema, {...valid, stop: ["a", "b", "c", "d", "e"]})).toEqual({
            param: "stop",
            message: "Invalid 'stop': expected an array with maximum length 4, but got an array with length 5 instead."
        });
    });
});
