"""The GPU preflight: what each stage needs on a card (its model's shapes read from its files, the
arithmetic of its memory), the cards found, the verdict before any stage, the memory reserved for the
run, and the locks that keep two talker jobs off one card."""
