import os from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
    test: {
        include: ["test/**/*.test.ts"],
        globalSetup: ["test/support/globalSetup.ts"],
        // Each file's duration also goes to the git-ignored test/.durations.json (`npm run test:durations`).
        reporters: ["default", "./test/support/durationsReporter.ts"],
        // Native llama.cpp contexts live in the test process: forks isolate them per file.
        pool: "forks",
        // Vitest's default is one file fewer than the cores: on a 2-core machine, one file at a time. Most files wait
        // on servers, sockets and worker threads more than they compute, so two at a time take about half as long there.
        maxWorkers: Math.max(2, os.availableParallelism() - 1),
        testTimeout: 30_000,
        hookTimeout: 60_000
    }
});
