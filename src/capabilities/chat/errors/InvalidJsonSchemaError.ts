export class InvalidJsonSchemaError extends Error {
    constructor(detail: string) {
        super(`The JSON schema in 'response_format' cannot be used: ${detail}`);
        this.name = "InvalidJsonSchemaError";
    }
}
