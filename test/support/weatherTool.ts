/** The one tool the tool-call tests offer (a city, and a number of days), as the `openai` client sends it. */
export const weatherTools = [{
    type: "function" as const,
    function: {name: "get_weather", description: "The weather in a city", parameters: {
        type: "object", properties: {city: {type: "string"}, days: {type: "integer"}}, required: ["city"]
    }}
}];

/** The question the scripted models answer with a get_weather call. */
export const weatherQuestion = [{role: "user" as const, content: "Weather in Paris for two days?"}];

/** A call as `[name, parsed arguments]` (null for a call that is not a function's). */
export const callOf = (call: {type: string, function?: {name: string, arguments: string}}) =>
    call.type === "function" ? [call.function!.name, JSON.parse(call.function!.arguments)] : null;
