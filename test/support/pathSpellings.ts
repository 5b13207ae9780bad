/** A route pattern made concrete: every `:param` replaced by a plausible value. */
export function concretePath(pattern: string) {
    return pattern.replace(/:(\w+)/g, (_, name: string) => name === "id" ? "fake" : `x-${name}`);
}

/**
 * The ways an attacker spells a path the router may still match while a naive check on the raw
 * path would not: case, trailing and doubled slashes, percent-encoded letters, dot segments,
 * query strings, matrix-like suffixes. Each is a raw request target (sent without normalisation).
 */
export function pathSpellings(path: string): string[] {
    const segments = path.split("/").filter((segment) => segment !== "");
    const first = segments[0] ?? "";
    const rest = segments.slice(1).join("/");
    const encodeLetters = (text: string) => [...text].map((char) => /[a-z0-9]/i.test(char) ? "%" + char.charCodeAt(0).toString(16).padStart(2, "0") : char).join("");
    const spellings = [
        path,
        path.toUpperCase(),
        mixedCase(path),
        path + "/",
        path.toUpperCase() + "/",
        "/" + path,
        path.replace(/\//g, "//"),
        `/${encodeLetters(first)}${rest ? "/" + rest : ""}`,
        `/${first.replace(/[a-z]/, (char) => "%" + char.charCodeAt(0).toString(16).toUpperCase())}${rest ? "/" + rest : ""}`,
        encodeLetters(path),
        `/./${path.slice(1)}`,
        `/x/..${path}`,
        `${path}/.`,
        `${path}?x=1`,
        `${path}/?a=b`,
        `${path}#frag`,
        `${path};x`,
        `${path}%2f`,
        path.replace(/\//g, "%2f")
    ];
    return [...new Set(spellings)];
}

function mixedCase(text: string) {
    return [...text].map((char, index) => index % 2 === 0 ? char.toUpperCase() : char.toLowerCase()).join("");
}
