"""Random-init models of real architectures, saved in their real on-disk formats (tests and bench/)."""

from __future__ import annotations

from pathlib import Path

# A VITS small enough to build and run in a second on a CPU: the real classes, fewer channels.
TINY_VITS = dict(
    hidden_channels=32, hidden_channels_ffn_text_encoder=64, num_heads_text_encoder=2, num_layers_text_encoder=1,
    resblock_type_decoder="2", resblock_kernel_sizes_decoder=[3], resblock_dilation_sizes_decoder=[[1, 3]],
    upsample_rates_decoder=[8, 8, 4], upsample_initial_channel_decoder=32, upsample_kernel_sizes_decoder=[16, 16, 8],
    num_layers_flow=1, num_layers_posterior_encoder=2, speaker_embedding_channels=16,
)


def save_coqui_vits(folder: Path, speakers: list[str] | None = None, seed: int = 0, phonemes: bool = True,
                    **model_args) -> Path:
    """A Coqui VITS model folder as Coqui's downloads lay it out: config.json, model_file.pth and,
    for several speakers, speakers.pth. Phonemes through espeak-ng (or characters), blanks between
    tokens, as the released English VITS voices do. model_args: VitsArgs fields (default: the
    released shapes)."""
    import torch
    from TTS.tts.configs.vits_config import VitsArgs, VitsConfig
    from TTS.tts.models.vits import Vits
    from TTS.tts.utils.speakers import SpeakerManager

    torch.manual_seed(seed)
    folder.mkdir(parents=True, exist_ok=True)
    if speakers:
        manager = SpeakerManager()
        manager.name_to_id = {name: i for i, name in enumerate(speakers)}
        manager.save_ids_to_file(str(folder / "speakers.pth"))
        model_args.update(use_speaker_embedding=True, speakers_file=str(folder / "speakers.pth"))
    text = dict(use_phonemes=True, phonemizer="espeak", phoneme_language="en-us") if phonemes else dict(use_phonemes=False)
    config = VitsConfig(model_args=VitsArgs(init_discriminator=False, **model_args), text_cleaner="english_cleaners",
                        add_blank=True, **text)
    model = Vits(config)
    model.config.model_args.speakers_file = "/where/it/was/trained/speakers.pth"  # as released configs do
    torch.save({"model": model.state_dict(), "config": model.config.to_dict()}, folder / "model_file.pth")
    model.config.save_json(str(folder / "config.json"))
    return folder
