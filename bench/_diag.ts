import {getLlama, LlamaLogLevel, type CustomBatchingDispatchSchedule} from "node-llama-cpp";
const llama = await getLlama({gpu: "auto", build: "never", logLevel: LlamaLogLevel.error});
const schedules: Record<string, "nextCycle" | CustomBatchingDispatchSchedule> = {
  nextCycle: "nextCycle",
  timeout0: (d) => { setTimeout(d, 0); },
  immediate2: (d) => { setImmediate(() => setImmediate(d)); },
};
for (const p of ["/work/shared/models/stories260K.gguf", "test/.models/bench50mb.gguf"]) {
  const model = await llama.loadModel({modelPath: p});
  for (const [name, schedule] of Object.entries(schedules)) {
  const ctx = await model.createContext({contextSize: 512, sequences: 4, threads: 1, failedCreationRemedy: false, batching: {dispatchSchedule: schedule}});
  const seqs = [0,1,2,3].map(() => ctx.getSequence());
  const prompt = [model.tokens.bos!, ...model.tokenize("Once upon a time", false)];
  const line: string[] = [];
  for (const n of [1, 2, 4]) {
    for (const rep of [0, 1]) {
      await Promise.all(seqs.map(s => s.clearHistory()));
      const times: number[][] = [];
      const t0 = performance.now();
      await Promise.all(seqs.slice(0, n).map(async (s, i) => {
        times[i] = [];
        let k = 0;
        for await (const tok of s.evaluate(prompt, {temperature: 0.8, topK: 0, topP: 1, minP: 0, seed: 1 + i, yieldEogToken: true})) {
          times[i].push(performance.now() - t0);
          if (++k >= 64) break;
        }
      }));
      const wall = performance.now() - t0;
      if (rep === 1) {
        const all = times.flat().sort((a, b) => a - b);
        let groups = 1; for (let j = 1; j < all.length; j++) if (all[j] - all[j-1] > 0.3) groups++;
        line.push(`${n}: ${(n*64/wall*1000).toFixed(0)} tok/s (${groups} groups)`);
      }
    }
  }
  console.log(p.split("/").pop(), name, line.join("; "));
  await ctx.dispose();
  }
  await model.dispose();
}
