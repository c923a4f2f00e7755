"""The LLM stage's engines (--reply): the models talker ships or finds, and the runtimes that run them."""
