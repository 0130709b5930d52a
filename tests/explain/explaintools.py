"""What the explanation tests look at: the prompt, and the layer, head and position chosen."""

PROMPT = "Data visualization empowers users to"
LAYER, HEAD, POSITION = 1, 2, 3
