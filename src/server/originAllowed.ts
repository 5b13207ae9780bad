/**
 * Whether a browser's `Origin` matches one of the configured origins: `*` (any), an exact origin
 * (`https://ui.example.com`), or one with `:*` for any port, or none (`http://localhost:*`).
 */
export function originAllowed(origin: string, patterns: readonly string[]): boolean {
    let url: URL;
    try {
        url = new URL(origin);
    } catch {
        return false;
    }
    // `Origin: null` (sandboxed frames, file://) never matches anything but `*`.
    if (url.origin === "null")
        return patterns.includes("*");
    for (const pattern of patterns) {
        if (pattern === "*")
            return true;
        const anyPort = pattern.endsWith(":*");
        let expected: URL;
        try {
            expected = new URL(anyPort ? pattern.slice(0, -2) : pattern);
        } catch {
            continue;
        }
        if (anyPort ? url.protocol === expected.protocol && url.hostname === expected.hostname : url.origin === expected.origin)
            return true;
    }
    return false;
}
