"""A small hand-made set of (grammatical, ungrammatical) sentence pairs.

Written for this project to choose an offline grammar checker (LanguageTool, which the
paper uses, cannot run offline). Each pair differs by one or two words, as a word
substitution attack would change a sentence: wrong part of speech, agreement, article,
verb form, word order, a missing or doubled word, a preposition. Review-style sentences,
like the data the attacks run on. 40 pairs.
"""

from __future__ import annotations

__all__ = ["GRAMMAR_PAIRS"]

#: (grammatical, ungrammatical) pairs.
GRAMMAR_PAIRS: tuple[tuple[str, str], ...] = (
    ("the film is beautiful .", "the film is a beautiful ."),
    ("she gives the best performance of her career .", "she give the best performance of her career ."),
    ("the movie was very good .", "the movie were very good ."),
    ("the actors are convincing .", "the actors is convincing ."),
    ("it is a charming and affecting journey .", "it is a charming and affecting journeys ."),
    ("the plot moves quickly .", "the plot moves quick the ."),
    ("i enjoyed every minute of it .", "i enjoyed every minutes of it ."),
    ("the story never makes sense .", "the story never make sense ."),
    ("this is an honest film about grief .", "this is an honest film about grieve ."),
    ("the director knows how to tell a story .", "the director knows how to told a story ."),
    ("a deep and meaningful conversation .", "a deep and meaningful converse ."),
    ("the dialogue sounds forced .", "the dialogue sounds force ."),
    ("he has never been better .", "he has never be better ."),
    ("the jokes fall flat .", "the jokes falls flat ."),
    ("we were bored by the end .", "we were boring by the end of ."),
    ("the music is lovely and the pictures are stunning .", "the music is lovely and the pictures are stun ."),
    ("it should have been much shorter .", "it should have been much short ."),
    ("the characters seem real .", "the characters seem reality ."),
    ("a funny and touching film .", "a funny and touch film ."),
    ("this film will make you laugh .", "this film will makes you laugh ."),
    ("the cast does its best with a weak script .", "the cast does its best with a weak scripted ."),
    ("nothing in the movie works .", "nothing in the movie work ."),
    ("the ending surprised me .", "the ending surprised me me ."),
    ("the film feels too long .", "the film feels too length ."),
    ("it is one of the best films of the year .", "it is one of the best film of the year ."),
    ("the acting is wooden and the plot is thin .", "the acting is wooden and the plot thin is ."),
    ("she plays the role with great skill .", "she plays the role with great skillful ."),
    ("they could not save the movie .", "they could not saved the movie ."),
    ("an intelligent and moving drama .", "an intelligent and moving dramatic ."),
    ("the story is told with care .", "the story is tell with care ."),
    ("audiences will love this film .", "audiences will loving this film ."),
    ("it is a waste of time .", "it is a waste of timely ."),
    ("the film lacks energy .", "the film lacks energetic ."),
    ("the visuals are impressive .", "the visuals are impress ."),
    ("i have seen better movies .", "i have saw better movies ."),
    ("the humor works well .", "the humor works good well ."),
    ("the movie tries to be clever .", "the movie tries to be cleverly ."),
    ("it is neither funny nor smart .", "it is neither funny nor smartly ."),
    ("the pacing is slow but the payoff is worth it .", "the pacing is slow but the payoff is worth it it ."),
    ("a film that stays with you .", "a film that stay with you ."),
)
