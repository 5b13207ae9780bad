/** A JSON object (not an array, not null): what a request's fields are read from before or without its schema. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}
