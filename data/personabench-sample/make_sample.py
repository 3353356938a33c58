# Writes data/personabench-sample/{raw,grouped}.json from the hand-written threads below.
import json, datetime
T = lambda a, b, s, m, *kids: dict(author=a, body=b, score=s, m=m, kids=list(kids))

POSTS = [
 # user, sub, title, content, post score, start, trees
 ("maya_reads", "books", "Finished all of Earthsea this month",
  "Le Guin's Earthsea cycle took me four weeks. The first three books feel like one story; Tehanu changes the tone completely and I am still thinking about it.",
  214, "2024-02-03T18:00:00Z", [
   T("quill_and_ink", "Tehanu divides people. Did the shift in tone bother you?", 41, 20,
     T("maya_reads", "At first yes, but by the end it felt like the point: the heroics were never the whole story.", 57, 45,
       T("quill_and_ink", "That is exactly how I came round to it.", 12, 70))),
   T("pagewalker", "Honestly the later books are a slog compared to Wizard.", -6, 25,
     T("maya_reads", "Slower, sure, but calling them a slog misses what they are doing.", -9, 50,
       T("pagewalker", "Fair, I might reread them.", 3, 90))),
   T("orbitfan", "Which translation of the maps did your edition have?", 2, 30,
     T("maya_reads", "The illustrated 2018 edition, the maps are gorgeous.", 8, 95)),
   T("lurker_42", "Adding this to my list.", 1, 35),
 ]),
 ("maya_reads", "movies", "Are long director's cuts ever worth it?",
  "Watched a four-hour cut last weekend and could not decide whether the extra scenes earned their place.",
  88, "2024-03-10T20:00:00Z", [
   T("reel_critic", "Most of the time the theatrical cut is tighter for a reason.", 30, 10,
     T("maya_reads", "I agree in general, this one just had whole character arcs restored.", 6, 40)),
   T("popcorn_theory", "Which film? That matters a lot.", 5, 15,
     T("maya_reads", "Not naming it, people get heated about this one.", -30, 35,
       T("popcorn_theory", "Now I am curious.", 4, 60))),
   T("cinephile_jo", "Four hours in one sitting is brave.", 9, 20,
     T("maya_reads", "Two sittings, I confess.", 22, 80)),
 ]),
 ("maya_reads", "art", "First attempt at gouache landscapes",
  "Switched from watercolour to gouache. Layering light over dark still feels like cheating.",
  45, "2024-04-01T09:00:00Z", [
   T("brushwork", "The sky gradient is lovely.", 6, 30,
     T("maya_reads", "Thanks, it took three tries.", 5, 50)),
 ]),
 ("kestrel_dev", "technology", "We replaced our cron jobs with a queue and regret nothing",
  "Small team, around forty scheduled scripts. Moving them to a job queue gave us retries and visibility, at the cost of one more service to run.",
  530, "2024-01-15T14:00:00Z", [
   T("ops_wren", "What happens when the queue itself goes down?", 64, 12,
     T("kestrel_dev", "Jobs wait; the producer buffers for an hour. We tested it by pulling the plug.", 120, 30,
       T("ops_wren", "An hour is generous, nice.", 18, 55,
         T("kestrel_dev", "It was cheap to add, the hard part was noticing we needed it.", 33, 75)))),
   T("grumpy_sysadmin", "This is just cron with extra steps and a pager.", -20, 18,
     T("kestrel_dev", "A pager that tells you which job failed is the whole point.", -35, 40)),
   T("byte_sized", "Which queue did you pick?", 7, 22,
     T("kestrel_dev", "A boring Postgres-backed one. Boring was the requirement.", 48, 44)),
   T("[deleted]", "[deleted]", 1, 26),
 ]),
 ("kestrel_dev", "gaming", "Speedrunning a game I made myself",
  "My own jam game from 2019 has a tiny speedrun board now. Watching strangers break it is humbling.",
  310, "2024-02-20T21:00:00Z", [
   T("frame_perfect", "The wall clip in level 2 was intended, right?", 52, 8,
     T("kestrel_dev", "Absolutely not, I had no idea the collision was that thin.", 140, 20,
       T("frame_perfect", "Please never patch it.", 61, 35))),
   T("retro_rita", "A dev who enjoys their game being broken, love it.", 25, 12,
     T("kestrel_dev", "Breaking it is more fun than making it was.", 19, 26)),
   T("salty_gamer", "Jam games on speedrun boards are a joke.", -30, 15,
     T("kestrel_dev", "Then it is a joke a lot of people are enjoying.", -12, 29)),
 ]),
 ("kestrel_dev", "entrepreneur", "Three years of a one-person SaaS: what I would redo",
  "Revenue is modest but steady. The biggest mistake was building features nobody asked for before talking to the twelve customers I had.",
  190, "2024-05-05T07:30:00Z", [
   T("bootstrapper", "How did you find the first twelve customers?", 40, 15,
     T("kestrel_dev", "Forum posts answering questions, then a link at the bottom. Slow but honest.", 66, 35)),
   T("vc_curious", "Why not raise money and grow faster?", -4, 20,
     T("kestrel_dev", "Because I wanted to keep the job, not sell it.", -18, 38,
       T("vc_curious", "Fair enough.", 2, 60))),
   T("solo_sam", "Pricing page tips?", 6, 25,
     T("kestrel_dev", "Three tiers, yearly discount, nothing clever.", 9, 45)),
 ]),
 ("tomasz_bakes", "life", "I finally learned to bake sourdough at 61",
  "Retired last spring and decided to learn one difficult thing. The starter is called Gerald. The café down the street now buys two loaves a week.",
  980, "2024-03-02T06:00:00Z", [
   T("crumb_shot", "Gerald is a great name. What hydration are you at?", 88, 25,
     T("tomasz_bakes", "Seventy-five percent. Higher made a puddle.", 150, 50,
       T("crumb_shot", "Seventy-five is the sweet spot for most flours.", 20, 80))),
   T("night_owl", "Selling bread after one year is impressive.", 35, 30,
     T("tomasz_bakes", "The café owner is my neighbour, I suspect kindness.", 210, 65)),
   T("doubting_dan", "Sourdough is overrated, yeast bread is just as good.", -25, 40,
     T("tomasz_bakes", "Try a slice of Gerald's work before deciding.", -7, 70)),
   T("lurker_42", "Congrats!", 3, 45),
 ]),
 ("tomasz_bakes", "science", "Why does dough rise faster in a warm kitchen?",
  "Asking as a baker, not a chemist. I know yeast likes warmth but I would like the actual mechanism.",
  120, "2024-04-12T10:00:00Z", [
   T("lab_coat_li", "Enzyme and yeast metabolism speed up with temperature, up to a point, so CO2 is produced faster.", 95, 20,
     T("tomasz_bakes", "So there is a ceiling where it stops helping?", 14, 40,
       T("lab_coat_li", "Around 35 C yeast starts to struggle, and past 50 C it dies.", 40, 60,
         T("tomasz_bakes", "That explains the disaster on the radiator last winter.", 55, 90)))),
   T("pedant_pat", "Technically it is not only yeast, bacteria matter in sourdough too.", 18, 25,
     T("tomasz_bakes", "Good point, Gerald is a whole ecosystem.", 27, 50)),
   T("contrarian", "Just use a proofing box and stop asking.", -9, 30,
     T("tomasz_bakes", "I like knowing why, not just what.", -4, 55)),
 ]),
 ("ada_orbit", "worldnews", "Launch of a new weather satellite this week",
  "A polar-orbiting weather satellite launched on Tuesday. It should improve forecasts for remote ocean areas.",
  260, "2024-06-04T12:00:00Z", [
   T("sky_watcher", "Polar orbit means it passes over every spot twice a day, right?", 34, 10,
     T("ada_orbit", "Roughly, yes, though the exact revisit depends on the swath width.", 44, 30,
       T("sky_watcher", "Thanks, TIL swath width.", 6, 50))),
   T("cynic_carl", "Another satellite, more space junk.", -15, 15,
     T("ada_orbit", "It has a deorbit plan, which is more than most.", -60, 35)),
   T("forecast_fan", "Will it help hurricane tracking?", 12, 20,
     T("ada_orbit", "Indirectly, through better ocean surface data.", 16, 40)),
 ]),
 ("ada_orbit", "politics", "How are space budgets actually decided?",
  "Curious about the process, not about any party. Who proposes the numbers and who signs off?",
  70, "2024-07-01T16:00:00Z", [
   T("civics_nerd", "Agencies propose, the executive compiles, the legislature amends and passes.", 25, 20,
     T("ada_orbit", "So the agency number is only a starting point?", 8, 45,
       T("civics_nerd", "A starting point that rarely survives intact.", 11, 70))),
   T("hot_take_hank", "It is all lobbying, the rest is theatre.", -11, 25,
     T("ada_orbit", "Lobbying matters, but the process is still real.", -25, 50)),
   T("policy_pam", "Committee hearings are public, worth watching.", 9, 30,
     T("ada_orbit", "I will look for the recordings, thanks.", 4, 55)),
 ]),
]

def iso(start, minutes):
    t = datetime.datetime.fromisoformat(start.replace('Z', '+00:00')) + datetime.timedelta(minutes=minutes)
    return t.strftime('%Y-%m-%dT%H:%M:%SZ')

def comment(node, start):
    return {"author": node["author"], "body": node["body"], "score": node["score"], "timestamp": iso(start, node["m"]),
            "replies": [comment(k, start) for k in node["kids"]]}

raw = []
for i, (user, sub, title, content, score, start, trees) in enumerate(POSTS):
    raw.append({"title": title, "url": f"https://example.invalid/r/{sub}/sample{i + 1}", "content": content, "__sub__": sub,
                "score": score, "author": user, "timestamp": start, "comments": [comment(t, start) for t in trees]})
grouped = {}
for post in raw:
    grouped.setdefault(post["author"], []).append(post)
import os
out = os.path.dirname(os.path.abspath(__file__)) + '/'
json.dump(raw, open(out + 'raw.json', 'w'), indent=2, ensure_ascii=False)
json.dump(grouped, open(out + 'grouped.json', 'w'), indent=2, ensure_ascii=False)
