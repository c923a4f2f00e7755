"""Replies (--reply) judged against facts: 20 questions in English and 20 in Mandarin, each with the
fact a right answer states (written down here, any of a few spellings), asked through the LLM stage's
own engine (make_llm, the job's system prompt and language) to each reply model:

  facts_right    answers that state the fact
  in_language    answers the stage speaks (llms.llm.spoken_reply: the job's script, not cut to nothing)
  load_s         loading the model (for the multilingual one, once joined from its wheels)
  reply_s        mean seconds per answer (greedy, llm.max_new_tokens)

    python bench/replies.py [--models smollm2,multilingual] [--json] [--show]

smollm2 is SmolLM2-135M on transformers (English only); multilingual the default multilingual model on
its default runtime (`talker[multilingual]`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# (question, the fact: any of these in the answer, case ignored)
QUESTIONS = {
    "en": [
        ("Why is the sky blue?", ["scatter"]),
        ("What is the capital of France?", ["Paris"]),
        ("How many legs does a spider have?", ["eight", "8"]),
        ("What gas do plants take in from the air to make food?", ["carbon dioxide", "CO2"]),
        ("Who wrote Romeo and Juliet?", ["Shakespeare"]),
        ("At what temperature in Celsius does water boil at sea level?", ["100"]),
        ("What is the largest planet in our solar system?", ["Jupiter"]),
        ("How many continents are there?", ["seven", "7"]),
        ("What is the chemical symbol for gold?", ["Au"]),
        ("Which is the largest ocean on Earth?", ["Pacific"]),
        ("At what temperature in Fahrenheit does water freeze?", ["32"]),
        ("Who painted the Mona Lisa?", ["Leonardo", "Vinci"]),
        ("What is the square root of 81?", ["9", "nine"]),
        ("What language do people in Brazil speak?", ["Portuguese"]),
        ("What is the fastest land animal?", ["cheetah"]),
        ("How many days are there in a leap year?", ["366"]),
        ("Which planet is called the Red Planet?", ["Mars"]),
        ("What is the highest mountain in the world?", ["Everest"]),
        ("What sweet food do bees make?", ["honey"]),
        ("What is the common name of H2O?", ["water"]),
    ],
    "zh": [
        ("天空为什么是蓝色的？", ["散射"]),
        ("法国的首都是哪里？", ["巴黎"]),
        ("蜘蛛有几条腿？", ["八", "8"]),
        ("植物从空气中吸收什么气体来制造养分？", ["二氧化碳", "CO2"]),
        ("《红楼梦》的作者是谁？", ["曹雪芹"]),
        ("在标准大气压下，水的沸点是多少摄氏度？", ["100", "一百"]),
        ("太阳系中最大的行星是哪一颗？", ["木星"]),
        ("世界上一共有几个大洲？", ["七", "7"]),
        ("中国的首都是哪座城市？", ["北京"]),
        ("世界上最大的海洋是哪个？", ["太平洋"]),
        ("一年有几个月？", ["十二", "12"]),
        ("长江最后流入哪个海？", ["东海"]),
        ("81的平方根是多少？", ["9", "九"]),
        ("巴西人说什么语言？", ["葡萄牙"]),
        ("陆地上跑得最快的动物是什么？", ["猎豹"]),
        ("闰年有多少天？", ["366"]),
        ("哪颗行星被称为红色星球？", ["火星"]),
        ("世界上最高的山峰是哪座？", ["珠穆朗玛", "珠峰"]),
        ("蜜蜂酿造的甜食是什么？", ["蜂蜜"]),
        ("水的化学式是什么？", ["H2O", "H₂O"]),
    ],
}


def states(answer: str, fact: list[str]) -> bool:
    return any(spelling.lower() in answer.lower() for spelling in fact)


def judge(engine, language: str, show: bool) -> dict:
    from talker_cli.errors import TalkerError
    from talker_cli.llms.llm import spoken_reply

    right = spoken = 0
    seconds = []
    for question, fact in QUESTIONS[language]:
        start = time.perf_counter()
        answer = engine.reply(question, language)
        seconds.append(time.perf_counter() - start)
        try:
            spoken_reply(answer, language)
            spoken += 1
        except TalkerError:
            pass
        right += states(answer, fact)
        if show:
            print(f"{language} {'+' if states(answer, fact) else '-'} {question} -> {answer!r}", file=sys.stderr)
    return {"facts_right": right, "in_language": spoken, "questions": len(QUESTIONS[language]),
            "reply_s": sum(seconds) / len(seconds)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="smollm2,multilingual")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show", action="store_true", help="every answer on stderr")
    args = parser.parse_args()

    from talker_cli.config import LlmConfig
    from talker_cli.llms.llm import make_llm
    from talker_cli.llms.models import smollm2_gguf

    models = {"smollm2": (LlmConfig(model=str(smollm2_gguf())), ["en"]), "multilingual": (LlmConfig(), ["en", "zh"])}
    rows = []
    for name in args.models.split(","):
        config, languages = models[name]
        engine = make_llm(config)
        start = time.perf_counter()
        engine.load()
        load_s = time.perf_counter() - start
        try:
            for language in languages:
                rows.append({"model": name, "runtime": engine.name, "language": language, "load_s": load_s,
                             **judge(engine, language, args.show)})
        finally:
            engine.unload()
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("| model | runtime | language | facts right | in language | load s | reply s |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['runtime']} | {r['language']} | {r['facts_right']}/{r['questions']} | "
              f"{r['in_language']}/{r['questions']} | {r['load_s']:.1f} | {r['reply_s']:.2f} |")


if __name__ == "__main__":
    main()
