// A planner -> solver -> critic agent with a retry loop, using the `openai` npm package.
//
// It is an ordinary Node program: the OpenAI client reads OPENAI_BASE_URL and
// OPENAI_API_KEY from the environment, and each component names its model
// ("planner", "solver", "critic"). Under agentbus (--agent-cmd "node agent.mjs")
// those variables point at the module gateway with this episode's token, and
// each name is a module whose model agentbus swaps per coalition.
//
// Contract: the task JSON arrives on stdin; the result is one JSON line on stdout.
// Modules agentbus switched off are listed in AGENTBUS_OFF_SLOTS (comma-separated).
// The logic is the same as examples/plain_openai/agent.py, so its truth.py holds here.
import OpenAI from "openai";

const ROUNDS = 2;
const SYSTEM = {
  planner: "You plan how to solve arithmetic word problems. Be brief.",
  solver: "You solve arithmetic problems carefully, following the plan you are given.",
  critic: "You check proposed answers by solving the problem yourself.",
};

function answerOf(text) {
  const found = [...(text || "").matchAll(/ANSWER:\s*(.+)/g)];
  return found.length ? found[found.length - 1][1].trim() : null;
}

async function ask(client, module, prompt) {
  const reply = await client.chat.completions.create({
    model: module,
    messages: [
      { role: "system", content: SYSTEM[module] },
      { role: "user", content: `${prompt}\nEnd with a line 'ANSWER: <value>'.` },
    ],
    temperature: 0,
  });
  return answerOf(reply.choices[0].message.content);
}

async function solve(client, task, off) {
  const question = task.question;
  let guess = null;
  if (!off.has("planner")) {
    guess = await ask(client, "planner", `Task: ${question}\nWrite a short plan.`);
  }
  const plan = guess ? `A planner's guess: ${guess}` : "No plan.";
  let answer = await ask(client, "solver", `Task: ${question}\n${plan}\nAttempt 1.`);
  if (off.has("critic")) return { answer, rounds: 1 };
  for (let attempt = 1; attempt <= ROUNDS; attempt++) {
    const check = await ask(
      client,
      "critic",
      `Task: ${question}\nProposed: ${answer}\nRound ${attempt}: solve it.`,
    );
    if (check !== null && check === answer) return { answer, rounds: attempt, confirmed: true };
    if (attempt < ROUNDS) {
      answer = await ask(
        client,
        "solver",
        `Task: ${question}\n${plan}\nA reviewer rejected ${answer}. Attempt ${attempt + 1}.`,
      );
    }
  }
  return { answer: guess ?? answer, rounds: ROUNDS };
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

const task = JSON.parse(await readStdin());
const off = new Set((process.env.AGENTBUS_OFF_SLOTS || "").split(",").filter(Boolean));
const client = new OpenAI({ maxRetries: 0 }); // OPENAI_BASE_URL, OPENAI_API_KEY
const result = await solve(client, task, off);
process.stdout.write(JSON.stringify(result) + "\n");
