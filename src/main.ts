import { runServerCommand } from "./runServerCommand.js";

await runServerCommand();
