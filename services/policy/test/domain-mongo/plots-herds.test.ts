import { registerFarmer } from '../../src/farmers/domain';
import { readHerd, registerHerd } from '../../src/herds/domain';
import { readPlot, registerPlot } from '../../src/plots/domain';
import { type DomainDb, domainDb, farmerInput, herdInput, outcome, plotInput } from './fixtures';

describe('plots and herds (domain)', () => {
  let db: DomainDb;
  beforeAll(async () => {
    db = await domainDb('plots_herds');
  });
  afterAll(async () => {
    await db.close();
  });

  it("registers a plot and a herd for the organization's farmer and reads them back", async () => {
    const tenant = db.organization();
    const farmer = await registerFarmer(tenant, farmerInput());
    const plot = await registerPlot(tenant, plotInput(farmer.id));
    expect(plot).toMatchObject({ farmerId: farmer.id, cropType: 'MAIZE', areaHectares: 1.5 });
    expect(await readPlot(tenant, plot.id)).toEqual(plot);
    const herd = await registerHerd(tenant, herdInput(farmer.id, 1_250_000.5));
    expect(herd).toMatchObject({ farmerId: farmer.id, estimatedValue: 1_250_000.5, headCount: 10 });
    expect(await readHerd(tenant, herd.id)).toEqual(herd);
  });

  it("refuses another organization's farmer with 404 and creates nothing; reads across organizations are 404", async () => {
    const owner = db.organization();
    const other = db.organization();
    const farmer = await registerFarmer(owner, farmerInput());
    const plot = await registerPlot(owner, plotInput(farmer.id));
    const herd = await registerHerd(owner, herdInput(farmer.id, 5000));

    expect(await outcome(registerPlot(other, plotInput(farmer.id)))).toMatchObject({
      code: 'NOT_FOUND',
      message: 'Farmer not found',
    });
    expect(await outcome(registerHerd(other, herdInput(farmer.id, 5000)))).toMatchObject({
      code: 'NOT_FOUND',
      message: 'Farmer not found',
    });
    expect([await other.plots.countDocuments(), await other.herds.countDocuments()]).toEqual([0, 0]);
    expect(await outcome(readPlot(other, plot.id))).toMatchObject({
      code: 'NOT_FOUND',
      message: 'Plot not found',
    });
    expect(await outcome(readHerd(other, herd.id))).toMatchObject({
      code: 'NOT_FOUND',
      message: 'Herd not found',
    });
  });
});
