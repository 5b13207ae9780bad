import { defineConfig } from "vitest/config";

export default defineConfig({
    test: {
        include: ["test/**/*.test.ts"],
        globalSetup: ["test/support/globalSetup.ts"],
        // Each file's duration also goes to the git-ignored test/.durations.json (`npm run test:durations`).
        reporters: ["default", "./test/support/durationsReporter.ts"],
        // Native llama.cpp contexts live in the test process: forks isolate them per file.
        pool: "forks",
        testTimeout: 30_000,
        hookTimeout: 60_000
    }
});
