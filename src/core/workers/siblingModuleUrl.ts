/**
 * The URL of a module next to `base` (an `import.meta.url`), with `base`'s own extension: `.ts` when
 * running from source (tsx, vitest), `.js` when running the compiled build. Worker threads and task
 * modules are loaded by URL, so the extension cannot be left to the bundler or the TypeScript loader.
 */
export function siblingModuleUrl(base: string, relativeWithoutExtension: string): string {
    return new URL(relativeWithoutExtension + (base.endsWith(".ts") ? ".ts" : ".js"), base).href;
}
