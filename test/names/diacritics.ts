// Property over the held-out test split: a real name with its diacritics is accepted whenever its stripped form is.
import t from 'tap'
import { loadNameModel, stripMarks } from '../../lib/names/verifier.js'
import { buildDataset } from '../../tools/name-data/dataset.js'
import { SEED } from '../../tools/name-data/seed.js'

const model = loadNameModel()

t.test('diacritics never count against a name (every test-split name that has them)', async (t) => {
  const ds = await buildDataset(SEED, { junkPerCategory: 1 })
  const names = ds.examples.filter((e) => e.split === 'test' && e.label === 1)
  let checked = 0
  const broken: string[] = []
  for (const e of names) {
    const stripped = stripMarks(e.value.normalize('NFC'))
    if (stripped === e.value.normalize('NFC')) continue
    checked++
    if (model.predict(stripped).prediction === 'LABEL_1' && model.predict(e.value).prediction !== 'LABEL_1') broken.push(e.value)
  }
  t.ok(checked > 1000, `${checked} test-split names with diacritics`)
  t.same(broken.slice(0, 20), [], `${broken.length} of ${checked} names are rejected although their stripped form is accepted`)
})
