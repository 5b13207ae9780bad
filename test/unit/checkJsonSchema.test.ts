import { describe, expect, it } from "vitest";
import { checkJsonSchema, jsonSchemaLimits } from "../../src/capabilities/chat/checkJsonSchema.js";
import { ApiError } from "../../src/core/http/ApiError.js";

const param = "response_format.json_schema.schema";

function refusal(schema: unknown) {
    try {
        checkJsonSchema(schema, param);
    } catch (error) {
        expect(error).toBeInstanceOf(ApiError);
        return {status: (error as ApiError).status, param: (error as ApiError).param, code: (error as ApiError).code, message: (error as ApiError).message};
    }
    throw new Error(`accepted: ${JSON.stringify(schema).slice(0, 200)}`);
}

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({type: "object", properties, ...extra});

describe("checkJsonSchema refuses what it cannot mean, naming the field", () => {
    it.each([
        ["minItems -1", object({a: {type: "array", items: {type: "string"}, minItems: -1}}), `${param}.properties.a.minItems`],
        ["minItems 2.5", object({a: {type: "array", items: {type: "string"}, minItems: 2.5}}), `${param}.properties.a.minItems`],
        ["maxLength as a string", object({a: {type: "string", maxLength: "5"}}), `${param}.properties.a.maxLength`],
        ["minItems > maxItems", object({a: {type: "array", items: {type: "string"}, minItems: 3, maxItems: 2}}), `${param}.properties.a.minItems`],
        ["minLength > maxLength", object({a: {type: "string", minLength: 9, maxLength: 1}}), `${param}.properties.a.minLength`],
        ["required as a string", object({a: {type: "string"}}, {required: "a"}), `${param}.required`],
        ["required with a repeat", object({a: {type: "string"}}, {required: ["a", "a"]}), `${param}.required`],
        ["an empty enum", object({a: {enum: []}}), `${param}.properties.a.enum`],
        ["an enum that is not an array", object({a: {enum: "x"}}), `${param}.properties.a.enum`]
    ])("%s", (_, schema, field) => {
        const error = refusal(schema);
        expect(error).toMatchObject({status: 400, param: field, code: "invalid_json_schema"});
    });
});

describe("checkJsonSchema bounds what the grammar builder is given", () => {
    it(`an enum of more than ${jsonSchemaLimits.enumValues} values`, () => {
        const values = Array.from({length: jsonSchemaLimits.enumValues + 1}, (_, index) => `v${index}`);
        expect(refusal(object({a: {type: "string", enum: values}}))).toMatchObject({status: 400, param: `${param}.properties.a.enum`, code: "json_schema_too_large"});
        // At the limit it is accepted.
        expect(checkJsonSchema(object({a: {type: "string", enum: values.slice(1)}}), param)).toBeTruthy();
    });

    it(`more than ${jsonSchemaLimits.nodes} schema objects`, () => {
        const properties = Object.fromEntries(Array.from({length: jsonSchemaLimits.nodes}, (_, index) => [`p${index}`, {type: "string"}]));
        expect(refusal(object(properties))).toMatchObject({status: 400, code: "json_schema_too_large"});
    });

    it(`more than ${jsonSchemaLimits.literalValues} enum values in all`, () => {
        const values = Array.from({length: 1000}, (_, index) => index);
        const properties = Object.fromEntries(Array.from({length: 5}, (_, index) => [`p${index}`, {type: "integer", enum: values}]));
        expect(refusal(object(properties))).toMatchObject({status: 400, code: "json_schema_too_large"});
    });
});
