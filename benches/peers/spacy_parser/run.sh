#!/usr/bin/env bash
# spaCy's dependency parser trained from scratch (blank Turkish pipeline, parser only, no
# pretrained vectors, CPU) on the Turkish Web Treebank's official split, scored like
# `multikernel eval` (punctuation excluded). spaCy's default parser reads word forms only,
# not the gold tags our parser uses. Run from the repository's root:
#
#   benches/peers/spacy_parser/run.sh [web|wiki] [MAX_EPOCHS]
set -euo pipefail
part=${1:-web}
epochs=${2:-30}
here=benches/peers/spacy_parser
work=target/peers/spacy-$part
mkdir -p "$work"
if [ ! -x "$work/venv/bin/python" ]; then
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install -q -r "$here/requirements.txt"
fi
py="$work/venv/bin/python"
"$py" "$here/prepare.py" "data/treebank/tr-$part.conllu.gz" "$work/data"
for s in train dev; do
  "$py" -m spacy convert "$work/data/$s.conllu" "$work/data" --converter conllu -n 10 > /dev/null
done
"$py" -m spacy init config "$work/config.cfg" --lang tr --pipeline parser --optimize efficiency --force > /dev/null
start=$(date +%s.%N)
"$py" -m spacy train "$work/config.cfg" --output "$work/model" \
  --paths.train "$work/data/train.spacy" --paths.dev "$work/data/dev.spacy" \
  --training.max_epochs "$epochs" > "$work/train.log" 2>&1
end=$(date +%s.%N)
echo "train_seconds $(echo "$end - $start" | bc)"
"$py" "$here/score.py" "$work/data/test.conllu" --model "$work/model/model-best"
