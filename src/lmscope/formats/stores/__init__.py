"""Models other programs keep on this machine, read only: Ollama's store (``ollama``), LM
Studio's folders (``lmstudio``), the Hugging Face cache (``hf_cache``), files packages wrote
(``packages``); their headers summed up without reading a weight (``gguf_header``,
``folder_header``, ``entry``); and the names that open them (``resolve``)."""
