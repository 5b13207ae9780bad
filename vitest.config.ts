import { defineConfig } from "vitest/config";

export default defineConfig({
    test: {
        include: ["test/**/*.test.ts"],
        globalSetup: ["test/support/globalSetup.ts"],
        // Native llama.cpp contexts live in the test process: forks isolate them per file.
        pool: "forks",
        testTimeout: 30_000,
        hookTimeout: 60_000
    }
});
